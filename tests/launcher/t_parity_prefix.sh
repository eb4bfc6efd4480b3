#!/bin/sh
# Console line prefixes side by side with real torchrun 2.6 (issue 17,
# item 4): the same no-op job (each rank prints one stdout and one stderr
# line) under torchrun 2.6 and cgrun, and the worker lines each prints on
# its stdout and stderr compared, prefixes included: unprefixed without
# --tee, "[${role_name}${local_rank}]:" on teed streams only (--role),
# TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE, --redirects with --tee, and
# --local-ranks-filter.  Lines are sorted (ranks run concurrently) and
# torchrun's own log lines left out.  Skips when torch 2.6 is unavailable.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
why=$(sh "$CGRUN_TOP/tests/torch26.sh" --ensure 2>&1) || skip "torch 2.6 unavailable: $(echo "$why" | tail -n 1)"

# torchrun 2.6 as Debian builds it (no libuv): every TCPStore without libuv.
cat > torchrun26.py <<'P'
import runpy, sys
import torch.distributed as dist
import torch.distributed.elastic.rendezvous.c10d_rendezvous_backend as c10d
_TCPStore = dist.TCPStore
def TCPStore(*a, **kw):
    kw.setdefault("use_libuv", False)
    return _TCPStore(*a, **kw)
dist.TCPStore = c10d.TCPStore = TCPStore
sys.argv[0] = "torchrun"
runpy.run_module("torch.distributed.run", run_name="__main__")
P
cat > hello.sh <<'W'
#!/bin/sh
echo "out $LOCAL_RANK"
echo "err $LOCAL_RANK" >&2
W
chmod +x hello.sh
# worker_lines FILE: the worker lines of a console stream, sorted.
worker_lines() { grep -E '(out|err) [0-9]$' "$1" | sort; }
port=$((29800 + $$ % 150))
n=0
# same ARGS...: the job under both launchers (environment from the caller);
# the worker lines of stdout and stderr must be the same.
same() {
	n=$((n + 1))
	port=$((port + 1))
	timeout 120 sh "$CGRUN_TOP/tests/torch26.sh" torchrun26.py --nnodes=1 \
		--master-port=$port --nproc-per-node=2 --log-dir="$T/tr$n" "$@" \
		--no-python ./hello.sh > tr.out 2> tr.err ||
		fail "torchrun 2.6 $* exited $?: $(tail -n 3 tr.err)"
	timeout 30 "$CGRUN_BIN" --nproc-per-node=2 --log-dir="$T/cg$n" "$@" \
		--no-python ./hello.sh > cg.out 2> cg.err ||
		fail "cgrun $* exited $?: $(tail -n 3 cg.err)"
	for s in out err; do
		worker_lines tr.$s > tr.$s.w
		worker_lines cg.$s > cg.$s.w
		cmp -s tr.$s.w cg.$s.w || fail "$* std$s: torchrun 2.6: $(cat tr.$s.w | tr '\n' '|') cgrun: $(cat cg.$s.w | tr '\n' '|')"
	done
	echo "same as torchrun 2.6: ${*:-(no options)}: $(cat cg.out.w cg.err.w | tr '\n' '|')"
}

unset TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE
same
grep -qx 'out 0' cg.out.w || fail "no unprefixed line without --tee"
same --tee=3
grep -qx '\[default0\]:out 0' cg.out.w || fail "no prefixed line with --tee"
same --tee=1 --role=trainer
same --redirects=1 --tee=2
same --tee=3 --local-ranks-filter=1
TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='<${role_name}|${rank}|${local_rank}> ' same --tee=3
