#!/bin/sh
# On a real Slurm (tests/slurm/cluster.sh): every node's /etc/hosts maps its
# own name to 127.0.1.1, as Debian's and Ubuntu's installers write it, and
# the other nodes' names to their addresses.  `srun -N2 cgrun
# --nproc-per-node=2 ...` with no rendezvous flag must still run its 4
# workers: the agent of SLURM_NODEID 0 hosts the rendezvous on every
# address (not only on 127.0.1.1, where n2 cannot reach it) and advertises
# its job store as n1, the name the other node resolves, not as 127.0.1.1;
# GROUP_RANK follows SLURM_NODEID.  Each node's hosts file is mounted over
# /etc/hosts in a mount namespace of the step's own, so Slurm's daemons are
# not affected.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/slurm/cluster.sh"
slurm_need
slurm_start 2

O=$SL_DIR/out
mkdir -p "$O"
for n in n1 n2; do
	sed "s/^[^ ]* $n\$/127.0.1.1 $n/" "$SL_DIR/hosts" >"$O/hosts.$n"
done
cat >"$O/job.sh" <<EOS
#!/bin/sh
export OUT=$O WANT=4
srun -N2 --label unshare --mount --propagation private sh -c \\
	'mount --bind "$O/hosts.\$(hostname)" /etc/hosts && getent hosts n1 && exec "\$0" "\$@"' \\
	"$CGRUN_BIN" -v --rdzv-conf=read_timeout=15,join_timeout=20 --nproc-per-node=2 \\
	--no-python "$CGRUN_TOP/tests/slurm/step_worker.sh" >"$O/step.out" 2>&1
echo \$? >"$O/step.rc"
EOS
slurm_run 2 45 "$O/job.sh"
grep -E 'n1$|c10d|advertis' "$O/step.out"
grep -q '^0: 127\.0\.1\.1 *n1$' "$O/step.out" || slurm_fail "n1 did not resolve its own name to 127.0.1.1"
grep -q "^1: $SL_NET\.1 *n1\$" "$O/step.out" || slurm_fail "n2 did not resolve n1 to $SL_NET.1"
slurm_step_ok "the step" "$O/step.rc" "$O/step.out"
cat "$O"/env.*
ranks=$(sed 's/.* RANK=\([0-9]*\) .*/\1/' "$O"/env.* | sort -n | tr '\n' ' ')
[ "$ranks" = "0 1 2 3 " ] || slurm_fail "ranks $ranks ran, want 0 1 2 3"
for f in "$O"/env.*; do
	grep -q ' MASTER_ADDR=n1 ' "$f" || slurm_fail "MASTER_ADDR is not n1: $(cat "$f")"
	g=$(sed 's/.* GROUP_RANK=\([0-9]*\) .*/\1/' "$f") n=$(sed 's/.* NODEID=\([0-9]*\) .*/\1/' "$f")
	[ "$g" = "$n" ] || slurm_fail "GROUP_RANK $g on SLURM_NODEID $n"
done
grep -q '^0: .*c10d: hosting the rendezvous on n1:' "$O/step.out" ||
	slurm_fail "SLURM_NODEID 0 did not host the rendezvous"
echo "ok: with each node's own name on 127.0.1.1, node 0 hosts the rendezvous on every address and advertises its store as n1; 4 workers ran"
