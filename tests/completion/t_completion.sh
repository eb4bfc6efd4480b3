#!/bin/sh
# bash completion (completion/cgrun.bash) with bash's real programmable
# completion: bash-completion's bash_completion and our file sourced, the
# function `complete` registered for cgrun and cgrun-rdzvd driven through
# COMP_WORDS/COMP_CWORD for every option of both programs' --help (both
# spellings where cgrun takes both; cgrun-rdzvd takes dashes only), the
# fixed values, files after the script and for file options; then an
# interactive bash in tmux completes with TAB as a user types
# (--opt=value forms, where readline splits words at '=').
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$CGRUN_TOP/tests/interop/lib.sh"
BC=/usr/share/bash-completion/bash_completion
COMP=$TOP/completion/cgrun.bash
command -v bash >/dev/null 2>&1 || skip "bash not installed"
[ -f "$BC" ] || skip "bash-completion not installed (apt-get install bash-completion)"

mkdir -p "$T/dir/sub"
touch "$T/dir/train.py" "$T/dir/data.txt"

# The driver: each line of $T/cases is a command line (a trailing space
# means a new empty word); it prints "LINE => SORTED COMPLETIONS".
cat >"$T/drive.bash" <<'EOS'
. "$1"
. "$2"
PATH=$3:$PATH
cd "$4" || exit 1
spec=$(complete -p cgrun cgrun-rdzvd) || exit 1
[[ $spec == *"complete -F _cgrun cgrun"*"complete -F _cgrun cgrun-rdzvd"* ]] ||
	{ echo "not registered: $spec"; exit 1; }
while IFS= read -r line; do
	read -ra COMP_WORDS <<<"$line"
	[[ $line == *' ' ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line COMP_POINT=${#line} COMPREPLY=()
	_cgrun "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" \
		"${COMP_WORDS[COMP_CWORD - 1]}"
	r=
	((${#COMPREPLY[@]})) && r=$(printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' ')
	printf '%s => %s\n' "$line" "$r"
done <"$5"
EOS

# Every option of a program's --help, as the help prints it.
cgrun_opts=$("$CGRUN_BIN" --help | sed -n 's/^  *\(-[a-zA-Z], \)\{0,1\}--\([a-z0-9-]*\).*/\2/p')
rdzvd_opts=$("$CGRUN_RDZVD" --help | sed -n 's/^  *\(-[a-zA-Z], \)\{0,1\}--\([a-z0-9-]*\).*/\2/p')
[ "$(echo "$cgrun_opts" | wc -l)" -ge 40 ] || fail "cgrun --help lists $(echo "$cgrun_opts" | wc -l) options"
[ "$(echo "$rdzvd_opts" | wc -l)" -ge 20 ] || fail "cgrun-rdzvd --help lists $(echo "$rdzvd_opts" | wc -l) options"
: >"$T/options"
for o in $cgrun_opts; do
	echo "cgrun --$o"
	echo "cgrun --$(echo "$o" | tr - _)"
done >>"$T/options"
for o in $rdzvd_opts; do echo "cgrun-rdzvd --$o"; done >>"$T/options"
cat >"$T/cases" <<'EOF'
cgrun --nproc-per-node 
cgrun --nproc_per_node 
cgrun --tty 
cgrun -r 
cgrun --tee 
cgrun --rdzv-backend 
cgrun --cpu-bind 
cgrun --event-log-handler 
cgrun --hang-progress 
cgrun tr
cgrun --nproc-per-node 2 tr
cgrun --standalone train.py d
cgrun train.py --nproc
cgrun --log-dir 
cgrun --event-log 
cgrun --no-python slee
cgrun --max-restarts 
cgrun-rdzvd --log-level 
cgrun-rdzvd --config 
cgrun-rdzvd --max_c
cgrun-rdzvd tr
EOF
# drive CASES OUT: run the driver on CASES.
drive() {
	bash --norc --noprofile "$T/drive.bash" "$BC" "$COMP" "$BUILD_DIR" "$T/dir" "$1" >"$2" 2>"$T/err" ||
		{ cat "$2" "$T/err"; fail "the driver failed"; }
	[ -s "$T/err" ] && { cat "$T/err"; fail "the completion wrote to stderr"; }
}
drive "$T/options" "$T/out1"
drive "$T/cases" "$T/out"

# got LINE: what LINE completed to (sorted, each followed by a space).
got() {
	grep -q -F -x -e "$1 => " -e "$1 => $(grep -F -- "$1 => " "$T/out" | head -n 1 | cut -d'>' -f2- | cut -c2-)" "$T/out" ||
		fail "no result for: $1"
	grep -F -- "$1 => " "$T/out" | head -n 1 | cut -d'>' -f2- | cut -c2-
}
# want LINE RESULT: LINE completed to exactly RESULT.
want() {
	r=$(got "$1")
	[ "$r" = "$2" ] || fail "'$1' completed to '$r', want '$2'"
}

# Each option alone completes to a list that holds it.
n=$(grep -c ' => ' "$T/out1")
bad=$(awk -F' => ' '{ split($1, w, " "); if (index(" " $2, " " w[2] " ") == 0) print $0 }' "$T/out1")
[ -z "$bad" ] || { echo "$bad"; fail "options that do not complete to themselves"; }
[ "$n" -eq $(($(echo "$cgrun_opts" | wc -l) * 2 + $(echo "$rdzvd_opts" | wc -l))) ] ||
	fail "$n option lines checked"
echo "ok: $n option spellings of cgrun and cgrun-rdzvd complete to themselves"

want "cgrun --nproc-per-node " "auto cpu gpu "
want "cgrun --nproc_per_node " "auto cpu gpu "
want "cgrun --tty " "always auto never "
want "cgrun -r " "0 1 2 3 "
want "cgrun --tee " "0 1 2 3 "
want "cgrun --rdzv-backend " "c10d etcd-v3 static "
want "cgrun --cpu-bind " "cores gpu none numa "
want "cgrun --event-log-handler " "console dynamic_rendezvous null "
want "cgrun --hang-progress " "heartbeat output "
want "cgrun --max-restarts " ""
want "cgrun-rdzvd --log-level " "debug info warn "
want "cgrun-rdzvd --max_c" ""
echo "ok: fixed values (nproc-per-node, tty, redirects, backends, handlers, log level)"

want "cgrun tr" "train.py "
want "cgrun --nproc-per-node 2 tr" "train.py "
want "cgrun --standalone train.py d" "data.txt "
want "cgrun train.py --nproc" ""
want "cgrun --log-dir " "sub "
want "cgrun --event-log " "data.txt sub train.py "
want "cgrun-rdzvd --config " "data.txt sub train.py "
want "cgrun-rdzvd tr" ""
case $(got "cgrun --no-python slee") in *sleep*) ;; *) fail "--no-python: no command sleep" ;; esac
echo "ok: the script, its arguments, file and directory options, commands with --no-python"

# An interactive bash in tmux: what TAB does as a user types.
command -v tmux >/dev/null 2>&1 || skip "tmux not installed: the interactive part did not run (apt-get install tmux)"
cat >"$T/rc" <<EOF
. $BC
. $COMP
PATH=$BUILD_DIR:\$PATH
PS1='\$ '
bind 'set show-all-if-ambiguous on'
bind 'set bell-style none'
cd $T/dir
EOF
sock=$T/tmux.sock
at_exit 'tmux -S "$sock" kill-server 2>/dev/null'
# One session for the whole test keeps the server up: a server whose last
# session ends exits, and a client that connects meanwhile fails.
tmux -S "$sock" -f /dev/null new-session -d -s keep cat || fail "tmux: cannot start a server"

# tab NAME KEYS WANT: type KEYS and a TAB in a fresh interactive bash; the
# screen must show the line WANT within 10 s (capture-pane drops trailing
# blanks: a prompt "$ " reads "$").
tab() {
	tmux -S "$sock" new-session -d -s "$1" -x 200 -y 20 \
		"bash --rcfile $T/rc --noprofile -i" || fail "tmux: cannot start bash"
	i=0
	until tmux -S "$sock" capture-pane -p -t "$1" | grep -q '^\$$'; do
		[ $i -ge 100 ] && fail "tmux $1: no prompt after 10 s"
		sleep 0.1; i=$((i + 1))
	done
	tmux -S "$sock" send-keys -t "$1" -l "$2"
	tmux -S "$sock" send-keys -t "$1" Tab
	i=0
	until tmux -S "$sock" capture-pane -p -t "$1" | grep -qxF -- "$3"; do
		[ $i -ge 100 ] && { tmux -S "$sock" capture-pane -p -t "$1"; fail "tmux $1: '$2' TAB did not show '$3'"; }
		sleep 0.1; i=$((i + 1))
	done
	tmux -S "$sock" kill-session -t "$1"
}
tab eq 'cgrun --nproc-per-node=g' '$ cgrun --nproc-per-node=gpu'
tab list 'cgrun --tty=a' 'always  auto'
tab under 'cgrun --nproc_per' '$ cgrun --nproc_per_node'
tab rdzvd 'cgrun-rdzvd --log-level=d' '$ cgrun-rdzvd --log-level=debug'
tab script 'cgrun --standalone tr' '$ cgrun --standalone train.py'
tab args 'cgrun train.py --max-restarts=1 da' '$ cgrun train.py --max-restarts=1 data.txt'
echo "ok: TAB in an interactive bash: --opt=value, a list, the underscore spelling, cgrun-rdzvd, the script, its arguments"
