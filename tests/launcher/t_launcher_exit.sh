#!/bin/sh
# Exit statuses (DESIGN §3.5, cgrun(1) EXIT STATUS): a failed job exits with
# its root-cause worker's status, 128 + N for a worker killed by signal N,
# 126/127 when the program cannot be executed (with the reason reported).
# Sweeps every exit code 0-255 and the common signals.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
ulimit -c 0
run() { timeout 20 "$CGRUN_BIN" "$@" >"$T/out" 2>"$T/err"; }

# Exit codes: one worker that exits with c.  256 runs: hwloc's I/O
# discovery (PCI, X displays), the slowest part of cgrun's start-up and
# irrelevant to exit statuses, is skipped for the sweeps.
export HWLOC_COMPONENTS=-gl,-opencl,-pci,-linuxio CGRUN_NVML_LIBRARY=none
c=0 bad=
while [ $c -le 255 ]; do
	run --nproc-per-node=1 --no-python sh -c "exit $c"
	rc=$?
	[ $rc -eq $c ] || bad="$bad $c->$rc"
	c=$((c + 1))
done
[ -z "$bad" ] || fail "exit status not propagated:$bad"
echo "exit codes 0-255 propagated"

# The root cause is the first failure, not a later one: rank 1 exits 9 at
# once, rank 0 would exit 4 later but is stopped first (TERM -> 143 is
# then an "other failure").
run --nproc-per-node=2 --no-python sh -c \
    '[ "$LOCAL_RANK" = 1 ] && exit 9; sleep 5; exit 4'
rc=$?
[ $rc -eq 9 ] || fail "root cause status: got $rc, want 9"
grep -q '^root cause: rank 1 (local_rank 1, node 0) exited with status 9' "$T/err" ||
	fail "report does not name rank 1 as root cause: $(cat "$T/err")"
grep -q 'rank 0 .*killed by signal 15 (SIGTERM) after cgrun stopped it' "$T/err" ||
	fail "report does not list the stopped rank 0: $(cat "$T/err")"

# Signals: the worker kills itself with each one (a script file: "$$" in
# an argument would become "$", as torchrun's ${local_rank} substitution does).
printf '#!/bin/sh\nkill -"$1" $$\nsleep 5\n' > sig.sh
chmod +x sig.sh
for sn in HUP:1 INT:2 QUIT:3 ILL:4 TRAP:5 ABRT:6 BUS:7 FPE:8 KILL:9 USR1:10 \
    SEGV:11 USR2:12 PIPE:13 ALRM:14 TERM:15 XCPU:24 SYS:31; do
	s=${sn%:*} n=${sn#*:}
	run --nproc-per-node=1 ./sig.sh "$s"
	rc=$?
	[ $rc -eq $((128 + n)) ] || bad="$bad $s($n)->$rc"
	grep -q "killed by signal $n (SIG$s)" "$T/err" || bad="$bad $s:report"
done
[ -z "$bad" ] || fail "signal statuses wrong:$bad"
echo "signals reported as 128+N"

unset HWLOC_COMPONENTS CGRUN_NVML_LIBRARY

# Exec failures: not found 127, not executable 126, with the reason.
run --nproc-per-node=2 --no-python ./does-not-exist
rc=$?
[ $rc -eq 127 ] || fail "missing program: got $rc, want 127"
grep -q 'could not execute ./does-not-exist: No such file or directory' "$T/err" ||
	fail "missing program: reason not reported: $(cat "$T/err")"
printf 'echo hi\n' > notexec
chmod 644 notexec
run --nproc-per-node=1 --no-python ./notexec
rc=$?
[ $rc -eq 126 ] || fail "non-executable: got $rc, want 126"
grep -q 'Permission denied' "$T/err" || fail "non-executable: no reason: $(cat "$T/err")"
run --nproc-per-node=1 --no-python no-such-program-on-path-xyz
[ $? -eq 127 ] || fail "program not on PATH: want 127"
PYTHON_EXEC=/nonexistent/python run --nproc-per-node=1 train.py
[ $? -eq 127 ] || fail "PYTHON_EXEC missing: want 127"
echo "exec failures 126/127"
echo ok
