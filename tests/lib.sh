# tests/lib.sh: what every black-box script of the suite shares.  A test
# (tests/AREA/t_NAME.sh) sources it first:
#
#	. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
#
# and gets:
#   TOP, BUILD_DIR, CGRUN, RDZVD  the source tree, the build, its programs
#                                 (CGRUN_TOP, CGRUN_BUILD, CGRUN_BIN and
#                                 CGRUN_RDZVD, set by tests/run-suite.sh;
#                                 ./build of this tree when run alone)
#   T                 the test's own temporary directory, also its TMPDIR, so
#                     what cgrun, torch and python leave there goes with it
#   fail MESSAGE      "FAIL: MESSAGE", the script's on_fail (if it defines
#                     one: the logs worth seeing), exit 1
#   fail_later MESSAGE  "FAIL: MESSAGE" and go on; the test then exits 1
#   no_failures       no fail_later so far (for a closing "ok: ..." line)
#   skip WHY          WHY as the last line, exit 77: the suite counts a skip
#                     (the clean-up after a skip prints nothing)
#   skip_later WHY    a part cannot run here: go on; the test then ends as a
#                     skip, WHY last (a test that skips a part is a skip)
#   track PID...      stopped at exit, with its process group if it leads one
#   spawn CMD...      CMD in the background in a process group of its own,
#                     tracked; its pid in $!
#   at_exit COMMAND   run at exit, after the processes stop, before T goes;
#                     the last registered runs first
#   poll_for SECS CMD...       until CMD succeeds (0) or SECS pass (1)
#   wait_for SECS WHAT CMD...  the same, failing "timed out after SECS s
#                              waiting for WHAT"
#   tmpdir NAME       a new directory $T/NAME (every temporary file of a test
#                     lives under T)
#   free_port [ADDR]  a TCP port free on ADDR (127.0.0.1), below the
#                     ephemeral range so no client socket takes it meanwhile
#   alive PID         PID runs and is not a zombie
#   now_ms            milliseconds on the wall clock
#
# At exit (normal, fail, skip, INT, TERM, HUP) the tracked processes and
# every child of the test get SIGTERM, their process groups too, then
# SIGKILL after 5 s; then the at_exit commands run and T is removed.
# Nothing a test starts outlives it.

: "${CGRUN_TOP:=$(dirname "$0")/../..}"
CGRUN_TOP=$(cd "$CGRUN_TOP" && pwd) || { echo "FAIL: no source tree"; exit 1; }
: "${CGRUN_BUILD:=$CGRUN_TOP/build}"
case $CGRUN_BUILD in /*) ;; *) CGRUN_BUILD=$(pwd)/$CGRUN_BUILD ;; esac
: "${CGRUN_BIN:=$CGRUN_BUILD/cgrun}"
: "${CGRUN_RDZVD:=$CGRUN_BUILD/cgrun-rdzvd}"
export CGRUN_TOP CGRUN_BUILD CGRUN_BIN CGRUN_RDZVD
# Python imports modules of the tree (tests/, examples/): no __pycache__.
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
TOP=$CGRUN_TOP BUILD_DIR=$CGRUN_BUILD CGRUN=$CGRUN_BIN RDZVD=$CGRUN_RDZVD

lib_tracked= lib_at_exit= lib_failed=0 lib_in_fail=0 lib_grace_ms=5000
lib_skipped= lib_skip_now=0
lib_tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-$(basename "$0" .sh).XXXXXX") ||
	{ echo "FAIL: cannot make a temporary directory in ${TMPDIR:-/tmp}"; exit 1; }
T=$lib_tmp TMPDIR=$lib_tmp
export TMPDIR

# fail MESSAGE: say what went wrong (and on_fail's logs), end the test.
fail() {
	echo "FAIL: $*"
	if [ "$lib_in_fail" = 0 ] && type on_fail >/dev/null 2>&1; then
		lib_in_fail=1
		on_fail
	fi
	exit 1
}

# fail_later MESSAGE: say what went wrong and go on; the test fails at exit.
fail_later() {
	echo "FAIL: $*"
	lib_failed=$((lib_failed + 1))
}

# no_failures: true while no fail_later was called.
no_failures() {
	[ "$lib_failed" -eq 0 ]
}

# skip WHY: the test cannot run here; WHY is the last line the suite shows
# (the clean-up after a skip says nothing).
skip() {
	echo "$*"
	exit 77
}

# skip_later WHY: a part of the test cannot run here; go on, and end as a
# skip (WHY the last line) unless something failed.
skip_later() {
	echo "skipped: $*"
	lib_skipped="$*"
}

# lib_stat PID: "STATE PGID START" of PID from /proc, or nothing.
lib_stat() {
	read -r lib_line 2>/dev/null <"/proc/$1/stat" || return 1
	# shellcheck disable=SC2086
	set -- ${lib_line##*) }
	echo "$1 $3 ${20}"
}

# alive PID: PID exists and is not a zombie.
alive() {
	lib_s=$(lib_stat "$1") || return 1
	[ "${lib_s%% *}" != Z ]
}

# track PID...: stop PID (and its process group, if it leads one) at exit.
# Its start time is kept, so a pid reused by another process is left alone.
track() {
	for lib_p in "$@"; do
		lib_s=$(lib_stat "$lib_p") || lib_s="? ? gone"
		lib_tracked="$lib_tracked $lib_p:${lib_s##* }"
	done
}

# spawn CMD...: CMD in the background, leading a process group of its own
# (setsid), tracked; $! is its pid.
spawn() {
	setsid "$@" &
	track $!
}

# at_exit COMMAND: run COMMAND (a string for eval) at exit.
at_exit() {
	lib_at_exit="$1
$lib_at_exit"
}

# now_ms: milliseconds on the wall clock.
now_ms() {
	lib_ns=$(date +%s%N)
	echo $((lib_ns / 1000000))
}

# poll_for SECS CMD...: run CMD every 50 ms until it succeeds (0) or SECS
# (a decimal number) have passed (1).
poll_for() {
	lib_end=$(($(now_ms) + $(echo "$1" | awk '{ printf "%d", $1 * 1000 }')))
	shift
	until "$@"; do
		[ "$(now_ms)" -lt "$lib_end" ] || return 1
		sleep 0.05
	done
}

# wait_for SECS WHAT CMD...: poll_for, failing the test on a timeout.
wait_for() {
	lib_secs=$1 lib_what=$2
	shift 2
	poll_for "$lib_secs" "$@" || fail "timed out after $lib_secs s waiting for $lib_what"
}

# tmpdir NAME: make $T/NAME and print its path.
tmpdir() {
	mkdir -p "$T/$1" || fail "cannot make $T/$1"
	echo "$T/$1"
}

# free_port [ADDR]: a port nothing listens on at ADDR (default 127.0.0.1),
# taken below the ephemeral range (no outgoing connection of a concurrent
# test gets it before the caller binds it).
free_port() {
	python3 - "${1:-127.0.0.1}" <<'EOF' || fail "no free port on ${1:-127.0.0.1}"
import random, socket, sys
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(100):
    p = random.randrange(max(1024, lo - 12000), lo)
    s = socket.socket()
    try:
        s.bind((sys.argv[1], p))
    except OSError:
        continue
    print(p)
    sys.exit(0)
sys.exit(1)
EOF
}

# lib_tracked_pids: the tracked pids still the processes tracked.
lib_tracked_pids() {
	for lib_e in $lib_tracked; do
		lib_s=$(lib_stat "${lib_e%%:*}") || continue
		[ "${lib_s##* }" = "${lib_e#*:}" ] && echo "${lib_e%%:*}"
	done
}

# lib_targets: "PID LEADS" for each process to stop: the tracked ones and
# this shell's children (LEADS 1 when it leads its process group), and
# "PID 2" for each tracked group whose leader is gone.  Run as $(...): the
# subshell running it is a child too, and left out.
lib_targets() {
	lib_kids=
	read -r lib_kids 2>/dev/null <"/proc/$$/task/$$/children"
	read -r lib_me 2>/dev/null </proc/self/stat
	lib_me=${lib_me%% *}
	lib_live=$(lib_tracked_pids)
	for lib_p in $lib_live $lib_kids; do
		[ "$lib_p" = "$lib_me" ] && continue
		lib_s=$(lib_stat "$lib_p") || continue
		# shellcheck disable=SC2086
		set -- $lib_s
		[ "$1" = Z ] && continue
		if [ "$2" = "$lib_p" ]; then echo "$lib_p 1"; else echo "$lib_p 0"; fi
	done
	for lib_e in $lib_tracked; do
		lib_p=${lib_e%%:*}
		[ -e "/proc/$lib_p" ] || ! lib_group_alive "$lib_p" || echo "$lib_p 2"
	done
}

# lib_group_alive PGID: a process of group PGID runs (zombies aside).
lib_group_alive() {
	kill -0 "-$1" 2>/dev/null || return 1
	ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { f = 1 } END { exit !f }'
}

# lib_kill SIG LIST: send SIG to each target of LIST (lib_targets' lines).
lib_kill() {
	echo "$2" | while read -r lib_p lib_lead; do
		[ "$lib_lead" = 0 ] || kill "-$1" "-$lib_p" 2>/dev/null
		[ "$lib_lead" = 2 ] || kill "-$1" "$lib_p" 2>/dev/null
	done
}

# lib_stop: SIGTERM to what the test started (groups included), SIGKILL
# to what is left after lib_grace_ms (5 s), then wait (5 s at most: a
# SIGKILL takes effect when the process next runs) until all are gone,
# and reap.
lib_stop() {
	lib_list=$(lib_targets)
	if [ -n "$lib_list" ]; then
		lib_kill TERM "$lib_list"
		lib_gone_within "$lib_grace_ms" || lib_kill KILL "$lib_list"
		lib_gone_within 5000 ||
			echo "cgrun tests: still running after SIGKILL: $lib_list" >&2
	fi
	lib_reap
}

# lib_gone_within MS: wait until nothing of lib_targets is left (0), or
# MS milliseconds (1); the list left in lib_list.
lib_gone_within() {
	lib_end=$(($(now_ms) + $1))
	while [ -n "$lib_list" ]; do
		[ "$(now_ms)" -lt "$lib_end" ] || return 1
		sleep 0.05
		lib_list=$(lib_targets)
	done
}

# lib_reap: collect the exit status of every child that ended (a bare
# `wait` would hang on one that did not).
lib_reap() {
	lib_kids=
	read -r lib_kids 2>/dev/null <"/proc/$$/task/$$/children"
	for lib_p in $lib_kids; do
		lib_s=$(lib_stat "$lib_p") || continue
		[ "${lib_s%% *}" = Z ] && wait "$lib_p"
	done
}

# lib_exit: the EXIT trap: stop the processes, run the at_exit commands,
# remove T; a test that called fail_later exits 1, one that called
# skip_later (and nothing failed) 77.
lib_exit() {
	lib_rc=$?
	trap '' INT TERM HUP
	if [ "$lib_failed" -gt 0 ]; then
		case $lib_rc in 0 | 77) lib_rc=1 ;; esac
	elif [ "$lib_rc" = 0 ] && [ -n "$lib_skipped" ]; then
		lib_rc=77 lib_skip_now=1
	fi
	lib_stop
	if [ "$lib_rc" = 77 ]; then
		eval "$lib_at_exit" >/dev/null 2>&1
	else
		eval "$lib_at_exit"
	fi
	cd / && rm -rf "$lib_tmp"	# not $T: a script may have reused the name
	[ "$lib_failed" = 0 ] || echo "$lib_failed checks failed"
	[ "$lib_skip_now" = 0 ] || echo "$lib_skipped"
	exit "$lib_rc"
}
trap lib_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
