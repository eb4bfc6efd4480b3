#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh, 3 nodes): a batch job of 3 nodes
# runs `srun -N2 cgrun --nproc-per-node=2 examples/ddp/train.py` with no
# rendezvous flag, twice: once plain, once with a worker crash injected at
# a random step in a random rank.  Both steps must use only their 2 nodes
# (not wait for the allocation's third), the crashed one must restart once,
# resume from the newest checkpoint and end with final weights identical to
# the plain run's.  SLURM_CRASH_SEED=N reproduces a run's crash point.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/slurm/cluster.sh"
STEPS=16 EVERY=4 NPROC=4
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed' >/dev/null 2>&1 ||
	slurm_skip "no torch in $PY (apt-get install python3-torch)"
slurm_need
slurm_start 3

seed=${SLURM_CRASH_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
set -- $(awk -v s="$seed" -v n="$STEPS" -v w="$NPROC" \
	'BEGIN { srand(s); print 1 + int(rand() * (n - 1)), int(rand() * w) }')
crash_step=$1 crash_rank=$2
echo "seed=$seed crash_step=$crash_step crash_rank=$crash_rank (SLURM_CRASH_SEED=$seed reproduces)"

O=$SL_DIR/out
mkdir -p "$O/plain" "$O/crash"
cat >"$O/job.sh" <<EOS
#!/bin/sh
# run NAME: one 2-node step of the example; its output in $O/NAME/out.
run() {
	srun -N2 "$CGRUN_BIN" -v --log-prefix=rank --nproc-per-node=2 --max-restarts=2 \\
		"$CGRUN_TOP/examples/ddp/train.py" --steps $STEPS --ckpt-every $EVERY \\
		--ckpt-dir "$O/\$1/ckpt" --out "$O/\$1/final.pt" >"$O/\$1/out" 2>&1
	echo \$? >"$O/\$1/rc"
}
export PYTHON_EXEC=$PY
run plain
CRASH_AT_STEP=$crash_step CRASH_RANK=$crash_rank run crash
EOS
slurm_run 3 120 "$O/job.sh"
for r in plain crash; do slurm_step_ok "the $r step" "$O/$r/rc" "$O/$r/out"; done
out=$O/crash/out
grep -q "^\[rank$crash_rank\]:rank $crash_rank: injected crash before step $crash_step " "$out" ||
	{ tail -n 30 "$out"; slurm_fail "the crash was not injected"; }
grep -q 'workers started attempt=1 ' "$out" || slurm_fail "no second attempt after the crash"
if grep -q 'attempt=2 ' "$out"; then slurm_fail "more than one restart"; fi
ck=$((crash_step / EVERY * EVERY))
if [ $ck -gt 0 ]; then
	want="attempt 1: resuming from $O/crash/ckpt/ckpt-$(printf %06d $ck).pt at step $ck"
else
	want="attempt 1: no checkpoint in $O/crash/ckpt, starting at step 0"
fi
grep -qF "[rank0]:$want" "$out" || { grep attempt "$out"; slurm_fail "expected: $want"; }
if grep -q 'attempt=1 ' "$O/plain/out"; then slurm_fail "the plain step restarted"; fi
digest() { sed -n 's/^\[rank0\]:final step=[0-9]* loss=[^ ]* sha256=\([0-9a-f]*\)$/\1/p' "$O/$1/out"; }
a=$(digest plain) b=$(digest crash)
[ -n "$a" ] && [ -n "$b" ] || slurm_fail "missing final digest (plain=$a crash=$b)"
echo "plain sha256=$a"
echo "crash sha256=$b"
[ "$a" = "$b" ] || slurm_fail "final weights differ after crash + resume"
cmp "$O/plain/final.pt" "$O/crash/final.pt" || slurm_fail "final weight files differ"
echo "ok: a 2-node step in a 3-node allocation, crash at step $crash_step in rank $crash_rank, identical weights"
