#!/bin/sh
# cgrun on a terminal (issue 17, item 1), driven through script(1) on a
# real pseudo-terminal: local rank 0 reads a typed line (no SIGTTIN hang),
# the other ranks get /dev/null as stdin; every worker sees a terminal on
# stdout and stderr, as wide as cgrun's less the prefix, and nothing of
# their output is lost; a prompt without a newline reaches the console
# before the answer is typed; the
# terminal's modes, changed by rank 0 (stty raw -echo), are back after
# cgrun exits normally, after rank 0 was killed, and after cgrun died of
# a fatal signal.  Off a terminal workers see pipes; --tty=always and
# --tty=never force either way.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
command -v script >/dev/null || skip "script(1) (util-linux) is not installed"
cd "$T" || exit 1
# onpty CMD: run the shell command CMD on a new pseudo-terminal (100x30),
# typed input from stdin; what the terminal showed in "screen".
onpty() { timeout 60 script -qec "stty cols 100 rows 30; $1" /dev/null > screen 2>&1; }
cat > w.sh <<'W'
#!/bin/sh
if [ "$LOCAL_RANK" = 0 ]; then
	IFS= read -r line && echo "got:$line" || echo "noread"
fi
[ -t 0 ] && echo "stdin:tty" || echo "stdin:notty"
[ -t 1 ] && echo "stdout:tty" || echo "stdout:notty"
[ -t 2 ] && echo "stderr:tty" >&2 || echo "stderr:notty" >&2
[ -t 1 ] && echo "size:$(stty size < /dev/tty)"
exit 0
W
chmod +x w.sh
# has RANK WHAT...: each "[rankRANK]:WHAT" line is on the screen.
has() {
	r=$1; shift
	for want; do
		tr -d '\r' < screen | grep -qxF "[rank$r]:$want" || fail "rank $r: no '$want' on: $(cat -A screen)"
	done
}

printf 'hello world\n' | onpty "$CGRUN_BIN --log-prefix=rank --nproc-per-node=2 ./w.sh; echo rc=\$?"
grep -q 'rc=0' screen || fail "job on a terminal: $(cat screen)"
has 0 'got:hello world' stdin:tty stdout:tty stderr:tty 'size:30 92'
has 1 stdin:notty stdout:tty stderr:tty 'size:30 92'
echo "on a terminal: rank 0 reads the typed line; workers see ttys 92 columns wide"

# Python in rank 0: input() and a pdb session from breakpoint().
if [ -x /usr/bin/python3 ]; then
	cat > ask_pdb.py <<'P'
import os
if os.environ["LOCAL_RANK"] == "0":
    print("hi", input("name? "))
    breakpoint()
    y = 41
    print("after pdb", y)
P
	printf 'bob\np 6*7\nc\n' | PYTHON_EXEC=/usr/bin/python3 onpty "$CGRUN_BIN --nproc-per-node=2 ask_pdb.py; echo rc=\$?"
	for want in 'hi bob' '42' 'after pdb 41' 'rc=0'; do
		tr -d '\r' < screen | grep -qx "$want" || fail "python input()/pdb: no '$want' in: $(cat -A screen)"
	done
	echo "python in rank 0: input() and breakpoint() read the terminal"
fi

# A prompt ("name? ", no newline) shows before the answer is typed: the
# typist waits (10 s at most) for it on the screen.
cat > ask.sh <<'W'
#!/bin/sh
[ "$LOCAL_RANK" = 0 ] || exit 0
printf 'name? '
IFS= read -r x && echo "hi $x"
W
chmod +x ask.sh
{ i=0; while [ $i -lt 200 ] && ! grep -q 'name? ' typescript 2>/dev/null; do
	sleep 0.05; i=$((i + 1)); done
  grep -q 'name? ' typescript 2>/dev/null && echo seen > prompt-seen; printf 'bob\n'; } |
	timeout 60 script -qfec "$CGRUN_BIN --nproc-per-node=2 ./ask.sh" typescript > /dev/null 2>&1
[ -f prompt-seen ] || fail "prompt not shown before the answer: $(cat -A typescript)"
tr -d '\r' < typescript | grep -qx 'hi bob' || fail "answer not read: $(cat -A typescript)"
echo "a prompt without newline reaches the terminal at once"

# Nothing lost or changed through a pty, for the rank holding the
# terminal too (its partial lines may show early, then continue).
cat > many.sh <<'W'
#!/bin/sh
seq -f 'o%g' 1 20000
seq -f 'e%g' 1 3000 >&2
printf 'last'
W
chmod +x many.sh
onpty "$CGRUN_BIN --log-prefix=rank ./many.sh" < /dev/null
{ seq -f '[rank0]:o%g' 1 20000; seq -f '[rank0]:e%g' 1 3000; echo '[rank0]:last'; } | sort > want
tr -d '\r' < screen | sort > got
cmp -s want got || fail "flood through a pty: $(diff want got | head -5)"
echo "23000 lines through ptys, whole and complete"

# Modes: rank 0 leaves the terminal raw; cgrun puts it back.  Without
# cgrun the same script leaves it changed (the check can fail).
cat > raw.sh <<'W'
#!/bin/sh
[ "$LOCAL_RANK" = 0 ] || exit 0
stty raw -echo
case "$1" in kill) kill -9 $$ ;; segv) kill -SEGV $PPID; sleep 5 ;; alrm) kill -ALRM $PPID; sleep 5 ;; esac
W
chmod +x raw.sh
modes() { onpty "stty -g > before; $1; stty -g > after"; }
modes "LOCAL_RANK=0 ./raw.sh"
cmp -s before after && fail "stty raw did not change the modes: the test cannot see anything"
for how in exit kill segv alrm; do
	modes "$CGRUN_BIN --nproc-per-node=2 ./raw.sh $how; echo rc=\$? > rc"
	cmp -s before after || fail "terminal modes not restored after rank 0 $how: $(cat before) -> $(cat after)"
	case "$how:$(cat rc)" in exit:rc=0|kill:rc=137|segv:rc=139|alrm:rc=142) ;;
	*) fail "$how: cgrun $(cat rc)" ;; esac
done
echo "terminal modes restored (normal exit, rank 0 killed, cgrun SIGSEGV and SIGALRM)"

# Off a terminal: pipes.  --tty=always: ptys anyway; --tty=never on a
# terminal: pipes, and rank 0 gets /dev/null as stdin.
timeout 20 "$CGRUN_BIN" --log-prefix=rank --nproc-per-node=2 ./w.sh < /dev/null > screen 2>&1 ||
	fail "job off a terminal: $(cat screen)"
has 0 noread stdin:notty stdout:notty stderr:notty
has 1 stdout:notty stderr:notty
timeout 20 "$CGRUN_BIN" --log-prefix=rank --tty=always --nproc-per-node=2 ./w.sh < /dev/null > screen 2>&1 ||
	fail "--tty=always job: $(cat screen)"
has 0 stdout:tty stderr:tty
has 1 stdout:tty stderr:tty
printf 'hello\n' | onpty "$CGRUN_BIN --log-prefix=rank --tty=never --nproc-per-node=2 ./w.sh"
has 0 noread stdin:notty stdout:notty stderr:notty
has 1 stdout:notty
echo "off a terminal: pipes; --tty=always and --tty=never"
