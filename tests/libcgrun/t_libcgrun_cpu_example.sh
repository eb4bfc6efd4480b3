#!/bin/sh
# examples/c/cpu_counter.c under `cgrun --standalone --nproc-per-node=4
# --max-restarts=1` with a crash injected in rank 2 at step 7 of the first
# attempt: the job restarts, every rank resumes from the newest checkpoint
# all ranks have, and ends with the right total (as without the crash).
# A second run without a crash must give the same total.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
b=$BUILD_DIR
cgrun=$CGRUN
[ -x "$cgrun" ] || fail "$cgrun not built"
cc -O2 -Wall -Wextra -Werror -I"$top/include" -o "$T/cpu_counter" \
    "$top/examples/c/cpu_counter.c" -L"$b" -lcgrun -Wl,-rpath,"$b" ||
	fail "cpu_counter does not build"

steps=20 world=4
want=$(( steps * (steps + 1) / 2 * world * (world + 1) / 2 ))

# run NAME EXTRA-ARGS...: the example under cgrun; output in $T/NAME.out.
run() {
	name=$1
	shift
	timeout 90 "$cgrun" --standalone --nproc-per-node=$world --max-restarts=1 \
	    --no-python "$T/cpu_counter" --dir "$T/$name.ckpt" --steps $steps "$@" \
	    >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	[ "$rc" -eq 0 ] || { cat "$T/$name.out" "$T/$name.err"; fail "$name: cgrun exit $rc"; }
	for r in 0 1 2 3; do
		grep -q "rank $r: total=$want steps=$steps " "$T/$name.out" ||
			{ cat "$T/$name.out" "$T/$name.err"; fail "$name: rank $r did not end with total=$want"; }
	done
}

run crash --crash-rank 2 --crash-step 7
grep -q "injected crash at step 7" "$T/crash.err" ||
	{ cat "$T/crash.err"; fail "the crash was not injected"; }
# Every rank resumes from the same step: 6, or 5 when a rank was stopped
# between leaving step 6's barrier and finishing its save of step 6.
from=$(sed -n 's/.*resumed_from=\([0-9]*\) restarts=1$/\1/p' "$T/crash.out" | sort -u)
n=$(grep -c "resumed_from=$from restarts=1" "$T/crash.out")
case "$from" in 5|6) ;; *) from=bad ;; esac
[ "$from" != bad ] && [ "$n" -eq $world ] ||
	{ cat "$T/crash.out" "$T/crash.err"; fail "ranks did not all resume from step 5 or 6 after one restart"; }
# Each rank kept its newest 2 checkpoints, all complete.
for r in 0 1 2 3; do
	c=$(ls "$T/crash.ckpt" | grep -c "^rank$r-.*\.ckpt\$")
	[ "$c" -eq 2 ] || { ls -la "$T/crash.ckpt"; fail "rank $r has $c checkpoint files, want 2"; }
done
[ -z "$(ls -A "$T/crash.ckpt" | grep '\.tmp\.')" ] || { ls -la "$T/crash.ckpt"; fail "temporary files left"; }
echo "ok: crash in rank 2 at step 7, all 4 ranks resumed from step $from, total=$want"

run clean
n=$(grep -c "resumed_from=0 restarts=0" "$T/clean.out")
[ "$n" -eq $world ] || fail "clean run: $n of $world ranks ran from scratch without restart"
echo "ok: same total without a crash"

# A restart finds the finished job's checkpoints and has nothing left to do.
run clean
n=$(grep -c "resumed_from=$steps restarts=0" "$T/clean.out")
[ "$n" -eq $world ] || { cat "$T/clean.out"; fail "rerun: $n of $world ranks resumed from step $steps"; }
echo "ok: a rerun resumes from the last step with the same total"
