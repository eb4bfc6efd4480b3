#!/bin/sh
# The environment of a no-op worker, compared variable for variable with
# what torchrun 2.6 gives for the same command (tests/launcher/
# torchrun26-env.txt, recorded once; see its header).  Only the run id, the
# port and the paths containing the run id may differ; cgrun's documented
# CGRUN_* additions are listed separately and checked to be the only extras.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"

env | cut -d= -f1 | sort -u > "$T/agent-keys"
env -u OMP_NUM_THREADS -u TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE \
    timeout 20 "$CGRUN_BIN" --log-prefix=rank --standalone --nproc-per-node=2 --no-python \
    /usr/bin/env > "$T/out" 2> "$T/err" || fail "cgrun exited $?: $(cat "$T/err")"

# "[rankN]:NAME=VALUE" -> "N NAME=VALUE" for variables the agent did not have.
sed -n 's/^\[rank\([0-9]*\)\]:\([A-Za-z_][A-Za-z0-9_]*\)=\(.*\)$/\1 \2=\3/p' "$T/out" |
while read -r lr kv; do
	k=${kv%%=*}
	grep -qx "$k" "$T/agent-keys" && [ "$k" != OMP_NUM_THREADS ] && continue
	echo "$lr $kv"
done > "$T/set"
[ -s "$T/set" ] || fail "no worker environment seen: $(head -5 "$T/out")"

runid=$(sed -n 's/^0 TORCHELASTIC_RUN_ID=//p' "$T/set")
echo "$runid" | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' ||
	fail "run id is not a uuid4: '$runid'"
port=$(sed -n 's/^0 MASTER_PORT=//p' "$T/set")
case "$port" in ''|*[!0-9]*) fail "MASTER_PORT not a number: '$port'" ;; esac
[ "$port" -gt 0 ] && [ "$port" -lt 65536 ] || fail "MASTER_PORT out of range: $port"
for lr in 0 1; do
	ef=$(sed -n "s/^$lr TORCHELASTIC_ERROR_FILE=//p" "$T/set")
	case "$ef" in */"$runid"_??????/attempt_0/$lr/error.json) ;;
	*) fail "error file of local rank $lr not under the run id: $ef" ;; esac
done

grep -v ' CGRUN_' "$T/set" | sed -e "s/$runid/<RUN_ID>/g" \
    -e 's/^\([0-9]* MASTER_PORT=\).*/\1<PORT>/' \
    -e 's|=.*\(/attempt_\)|=<DIR>\1|' | sort > "$T/cgrun"
grep -v '^#' "$CGRUN_TOP/tests/launcher/torchrun26-env.txt" | sort > "$T/torchrun"
if ! diff -u "$T/torchrun" "$T/cgrun"; then
	fail "worker environment differs from torchrun 2.6 (- torchrun, + cgrun)"
fi
extra=$(grep ' CGRUN_' "$T/set" | sed 's/^[0-9]* //; s/=.*//' | sort -u | tr '\n' ' ')
echo "same variables as torchrun 2.6 ($(wc -l < "$T/torchrun") checked); cgrun adds: $extra"

# Per-run values: a second run gets another run id and the store is fresh.
env -u OMP_NUM_THREADS timeout 20 "$CGRUN_BIN" --standalone --nproc-per-node=1 \
    --no-python /usr/bin/env > "$T/out2" 2>&1 || fail "second run failed"
grep -q "TORCHELASTIC_RUN_ID=$runid" "$T/out2" && fail "run id reused"
# One worker: OMP_NUM_THREADS is left alone, as torchrun does.
grep -q 'OMP_NUM_THREADS=' "$T/out2" && fail "OMP_NUM_THREADS set for one worker"
# A user's OMP_NUM_THREADS and TORCH_NCCL_ASYNC_ERROR_HANDLING win.
OMP_NUM_THREADS=3 TORCH_NCCL_ASYNC_ERROR_HANDLING=0 timeout 20 "$CGRUN_BIN" \
    --log-prefix=rank --nproc-per-node=2 --max-restarts=4 --role=trainer --rdzv-id=job7 \
    --no-python /usr/bin/env > "$T/out3" 2>&1 || fail "third run failed"
for want in OMP_NUM_THREADS=3 TORCH_NCCL_ASYNC_ERROR_HANDLING=0 \
    TORCHELASTIC_MAX_RESTARTS=4 ROLE_NAME=trainer TORCHELASTIC_RUN_ID=job7; do
	[ "$(grep -c "^\[rank[01]\]:$want\$" "$T/out3")" = 2 ] ||
		fail "expected $want in both workers"
done
echo ok
