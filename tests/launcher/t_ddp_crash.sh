#!/bin/sh
# The DDP example (examples/ddp/train.py) under `cgrun --standalone` with 4
# workers: a run with a crash injected at a random step in a random rank
# restarts, resumes from the newest checkpoint and ends with final weights
# bit-identical to an uninterrupted run's.  The random choice comes from a
# seed printed first; DDP_CRASH_SEED=N reproduces a run.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
TRAIN=$CGRUN_TOP/examples/ddp/train.py
STEPS=24 EVERY=4 NPROC=4

# An interpreter with torch: $PYTHON_EXEC, python3 on PATH, Debian's.
PY=
for p in "${PYTHON_EXEC:-}" python3 /usr/bin/python3; do
	[ -n "$p" ] || continue
	if "$p" -c 'import torch.distributed' >/dev/null 2>&1; then PY=$p; break; fi
done
[ -n "$PY" ] || skip "no python3 with torch (install python3-torch or set PYTHON_EXEC)"
PY=$(command -v "$PY")

seed=${DDP_CRASH_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
set -- $(awk -v s="$seed" -v n="$STEPS" -v w="$NPROC" \
	'BEGIN { srand(s); print 1 + int(rand() * (n - 1)), int(rand() * w) }')
crash_step=$1 crash_rank=$2
echo "seed=$seed crash_step=$crash_step crash_rank=$crash_rank python=$PY (DDP_CRASH_SEED=$seed reproduces)"

# run NAME [ENV...]: one cgrun job of the example in $T/NAME, 150 s at most.
run() {
	name=$1; shift
	mkdir -p "$T/$name"
	env "$@" PYTHON_EXEC="$PY" timeout 150 "$CGRUN_BIN" -v --log-prefix=rank --standalone \
		--nproc-per-node=$NPROC --max-restarts=2 "$TRAIN" --steps $STEPS \
		--ckpt-every $EVERY --ckpt-dir "$T/$name/ckpt" --out "$T/$name/final.pt" \
		>"$T/$name/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || { tail -n 30 "$T/$name/out"; fail "$name run exited $rc"; }
}
digest() { sed -n 's/^\[rank0\]:final step=[0-9]* loss=[^ ]* sha256=\([0-9a-f]*\)$/\1/p' "$T/$1/out"; }

run plain
run crash CRASH_AT_STEP="$crash_step" CRASH_RANK="$crash_rank"

grep -q "^\[rank$crash_rank\]:rank $crash_rank: injected crash before step $crash_step " "$T/crash/out" ||
	fail "the crash was not injected"
grep -q '^cgrun: workers started attempt=1 ' "$T/crash/out" || fail "no second attempt"
if grep -q 'attempt=2 ' "$T/crash/out"; then fail "more than one restart"; fi
ck=$((crash_step / EVERY * EVERY))
if [ $ck -gt 0 ]; then
	want="attempt 1: resuming from $T/crash/ckpt/ckpt-$(printf %06d $ck).pt at step $ck"
else
	want="attempt 1: no checkpoint in $T/crash/ckpt, starting at step 0"
fi
grep -qxF "[rank0]:$want" "$T/crash/out" || { grep attempt "$T/crash/out"; fail "expected: $want"; }
grep -q '^\[rank0\]:attempt 0: no checkpoint' "$T/plain/out" || fail "plain run did not start fresh"
if grep -q 'attempt=1 ' "$T/plain/out"; then fail "plain run restarted"; fi

a=$(digest plain) b=$(digest crash)
[ -n "$a" ] && [ -n "$b" ] || fail "missing final digest (plain=$a crash=$b)"
echo "plain sha256=$a"
echo "crash sha256=$b"
[ "$a" = "$b" ] || fail "final weights differ after crash + resume"
cmp "$T/plain/final.pt" "$T/crash/final.pt" || fail "final weight files differ"
echo "ok: identical final weights after a crash at step $crash_step in rank $crash_rank"
