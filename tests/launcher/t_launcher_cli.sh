#!/bin/sh
# The command line through the real binary: --help/--version, one-line
# usage errors with status 2, dash/underscore spellings and PET_* fallbacks,
# how the program is run (python -u SCRIPT.py, -m MODULE, --no-python, a
# compiled or #! program run directly, --run-path), ${local_rank} in
# arguments, --nproc-per-node=cpu, gpu without GPUs, multi-node without a
# backend to reach.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
run() { timeout 20 "$CGRUN_BIN" --log-prefix=rank "$@" > out 2> err; }

run --help && grep -q -- '--nproc-per-node' out && grep -q -- '--max-restarts' out ||
	fail "--help"
run --version && grep -Eq '^cgrun [0-9]+\.[0-9]+' out || fail "--version"

# Usage errors: status 2, first line names the problem.
usage() {	# usage "EXPECTED TEXT" ARGS...
	want=$1; shift
	run "$@"
	rc=$?
	[ $rc -eq 2 ] || fail "'$*' exited $rc, want 2"
	head -n 1 err | grep -q "^cgrun: .*$want" || fail "'$*': $(head -n 1 err)"
}
usage "unknown option --bogus" --bogus x.py
usage "unknown option -z" -z x.py
usage "ambiguous option --r" --r=1 x.py
usage "--nnodes" --nnodes=2:1 x.py
usage "--nnodes" --nnodes=0 x.py
usage "--nproc-per-node" --nproc-per-node=abc x.py
usage "--nproc-per-node" --nproc-per-node=0 x.py
usage "--max-restarts" --max-restarts=-1 x.py
usage "--max-restarts: expected an integer" --max-restarts=x x.py
usage "--monitor-interval" --monitor-interval=0 x.py
usage "--shutdown-timeout" --shutdown-timeout=-1 x.py
usage "--redirects" --redirects=4 x.py
usage "--tee" -t 0:5 x.py
usage "--start-method" --start-method=thread x.py
usage "--module and --no-python" -m --no-python x
usage "--rdzv-conf" --rdzv-conf=join_timeout= x.py
usage "--signals-to-handle" --signals-to-handle=SIGBOGUS x.py
usage "--local-ranks-filter" --local-ranks-filter=a x.py
usage "needs a value" --nnodes
usage "missing the training script"
PET_NPROC_PER_NODE=zz usage "--nproc-per-node" x.py
PET_STANDALONE=yes usage "PET_STANDALONE: expected an integer" x.py
[ "$(wc -l < err)" -le 3 ] || fail "usage error is not short: $(cat err)"
usage '--rdzv-backend: unknown value "zookeeper"' --rdzv-backend=zookeeper --nnodes=2 x.py
echo "usage errors"

# Spellings, prefixes and PET_* fallbacks reach the workers.
run --nproc_per_node 2 --max_restarts=3 --no_python sh -c 'echo $LOCAL_WORLD_SIZE $TORCHELASTIC_MAX_RESTARTS' &&
	[ "$(grep -c ':2 3$' out)" = 2 ] || fail "underscore spellings: $(cat out err)"
run --nproc 2 --no-py sh -c 'echo $WORLD_SIZE' && [ "$(grep -c ':2$' out)" = 2 ] ||
	fail "unique prefixes: $(cat out err)"
PET_NPROC_PER_NODE=3 PET_NO_PYTHON=1 PET_ROLE=r run sh -c 'echo $ROLE_NAME' &&
	[ "$(grep -c ':r$' out)" = 3 ] || fail "PET_* fallbacks: $(cat out err)"
PET_NPROC_PER_NODE=3 run --nproc-per-node=1 --no-python true &&
	PET_NPROC_PER_NODE=3 run --nproc-per-node=1 --no-python sh -c 'echo $LOCAL_WORLD_SIZE' &&
	grep -qx '\[rank0\]:1' out || fail "command line does not win over PET_*"
run --nproc-per-node=cpu --no-python sh -c 'echo $LOCAL_WORLD_SIZE' &&
	grep -qx "\[rank0\]:$(nproc)" out || fail "--nproc-per-node=cpu: $(head -1 out)"
echo "spellings, prefixes, PET_*"

# PET_<NAME> only for torchrun's options that have one (as torchrun): the
# --help heading that says PET_ lists exactly the variables cgrun(1)
# names, and no other option's PET_ variable is read: a value that is
# not one of theirs (zz) changes nothing, where a PET_ variable read would
# be a usage error (PET_NPROC_PER_NODE=zz above; a flag's: PET_STANDALONE).
run --help || fail "--help"
section() {	# the option names under the --help heading starting with $1
	awk -v h="$1" '/^[^ ]/ { on = index($0, h) == 1; next }
	    on && match($0, /--[a-z-]+/) { print substr($0, RSTART + 2, RLENGTH - 2) }' out
}
section "torchrun's options (also from PET_" | tr 'a-z-' 'A-Z_' | sed 's/^/PET_/' | sort > help.pet
sed -n '/^\.It Ev PET_ Ns Ar NAME/,/^\.It Ev PYTHON_EXEC/p' "$CGRUN_TOP/man/cgrun.1" |
	grep -o 'PET_[A-Z][A-Z_]*' | sort -u > man.pet
[ "$(wc -l < help.pet)" -ge 20 ] || fail "--help lists $(wc -l < help.pet) options with PET_: $(cat out)"
cmp -s help.pet man.pet || fail "--help and cgrun(1) disagree on PET_: $(diff help.pet man.pet)"
{ section "torchrun's options without a PET_"; section "cgrun's own options (no PET_"; } |
	tr 'a-z-' 'A-Z_' | sed 's/^/PET_/; s/$/=zz/' > other.pet
[ "$(wc -l < other.pet)" -ge 10 ] || fail "--help lists $(wc -l < other.pet) options without PET_: $(cat out)"
grep -q '^PET_HANG_TIMEOUT=zz$' other.pet || fail "--hang-timeout is not listed as cgrun's own"
env $(cat other.pet) "$CGRUN_BIN" --log-prefix=rank --no-python sh -c 'echo ran' > out 2> err &&
	grep -qx '\[rank0\]:ran' out || fail "a PET_ variable of an option without one was read: $(cat err)"
echo "PET_ only for torchrun's options"

# --help and cgrun(1)'s OPTIONS section name the same options, and the
# man page's --rdzv-backend item every backend --help lists.
run --help || fail "--help"
awk 'match($0, /^(      |  -., )--[a-z-]+/) {
	s = substr($0, RSTART, RLENGTH); sub(/.*--/, "", s); print s }' out |
	sort > help.opts
sed -n '/^\.Sh OPTIONS/,/^\.Sh ENVIRONMENT/p' "$CGRUN_TOP/man/cgrun.1" |
	grep '^\.It' | grep -o 'Fl \\-[a-z][a-z\\-]*' | sed 's/^Fl \\-//; s/\\//g' |
	sort -u > man.opts
[ "$(wc -l < help.opts)" -ge 40 ] || fail "--help lists $(wc -l < help.opts) options: $(cat out)"
cmp -s help.opts man.opts || fail "--help and cgrun(1) list other options (- help, + man): $(diff help.opts man.opts)"
backends=$(sed -n 's/^ *--rdzv-backend \([^ ]*\) .*/\1/p' out | tr '|' ' ')
[ -n "$backends" ] || fail "--help gives no --rdzv-backend values: $(grep rdzv-backend out)"
sed -n '/^\.It Fl \\-rdzv\\-backend/,/^\.It/p' "$CGRUN_TOP/man/cgrun.1" | sed 's/\\//g' > man.backend
for b in $backends etcd etcd-v2; do
	grep -q -- "$b" man.backend || fail "cgrun(1)'s --rdzv-backend lacks $b"
	grep -q -- "$b" out || fail "--help lacks backend $b"
done
echo "--help and cgrun(1): $(wc -l < help.opts) options, backends $backends"

# The worker command.  A fake interpreter records its arguments.
cat > fakepy <<'P'
#!/bin/sh
echo "py $*"
P
chmod +x fakepy
touch train.py script.py notaprogram	# cgrun checks a script exists (issue 18)
PYTHON_EXEC=$T/fakepy run --nproc-per-node=2 train.py --lr 1 --rank='${local_rank}' &&
	grep -qx '\[rank1\]:py -u train.py --lr 1 --rank=1' out || fail "python command: $(cat out err)"
PYTHON_EXEC=$T/fakepy run -m pkg.mod a && grep -qx '\[rank0\]:py -u -m pkg.mod a' out ||
	fail "-m command: $(cat out err)"
PYTHON_EXEC=$T/fakepy run --run-path --no-python script.py && grep -qx '\[rank0\]:py -u script.py' out ||
	fail "--run-path overrides --no-python: $(cat out err)"
PYTHON_EXEC=$T/fakepy run notaprogram && grep -qx '\[rank0\]:py -u notaprogram' out ||
	fail "a non-program goes to python: $(cat out err)"
# A #! script and an ELF binary (on PATH) run directly.
printf '#!/bin/sh\necho direct "$@" $LOCAL_RANK\n' > trainer
chmod +x trainer
PYTHON_EXEC=$T/fakepy run --nproc-per-node=2 trainer x && grep -qx '\[rank1\]:direct x 1' out ||
	fail "#! program not run directly: $(cat out err)"
mkdir bin && cp /usr/bin/env bin/elftrainer
PATH=$T/bin:$PATH PYTHON_EXEC=$T/fakepy run elftrainer && grep -q "^\[rank0\]:RANK=0$" out || fail "ELF program on PATH: $(cat out err)"
echo "worker commands"

# The worker process: its own process group, no blocked or ignored signal
# (even when cgrun was started with INT and QUIT ignored, as background
# jobs of a shell are), no stray file descriptors (cgrun's own fd 5 included).
# Signals 32 and 33 are glibc's own (SIGCANCEL, SIGSETXID): no libc call can
# change them, glibc sets their handlers in every process, and under GNU
# make (make check) every process starts with them ignored, so they are
# masked out (0x180000000).
cat > proc.sh <<'W'
#!/bin/sh
pgid=$(cut -d' ' -f5 /proc/$$/stat)
echo "pgid_is_pid=$([ "$pgid" = $$ ] && echo yes || echo no)"
grep -E '^SigBlk:' /proc/$$/status | tr -d '\t'
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
printf 'SigIgn:%016x\n' $(( 0x$ign & ~0x180000000 ))
W
chmod +x proc.sh
(trap '' INT QUIT; exec 5</dev/null; timeout 20 "$CGRUN_BIN" --log-prefix=rank --nproc-per-node=2 ./proc.sh > out 2> err) ||
	fail "proc job failed: $(cat err)"
for want in 'pgid_is_pid=yes' 'SigBlk:0000000000000000' 'SigIgn:0000000000000000'; do
	[ "$(grep -c "^\[rank[01]\]:$want\$" out)" = 2 ] || fail "worker process: want $want: $(cat out)"
done
# ls's own descriptor for /proc/self/fd aside, only 0, 1 and 2 are open.
(exec 5</dev/null; timeout 20 "$CGRUN_BIN" --log-prefix=rank --nproc-per-node=2 --no-python /bin/ls -l /proc/self/fd > out 2> err) ||
	fail "fd job failed: $(cat err)"
fds=$(sed -n 's/^\[rank[01]\]:.* \([0-9][0-9]*\) -> \(.*\)$/\1 \2/p' out | grep -v ' /proc/[0-9]*/fd$' | cut -d' ' -f1 | sort -n | tr '\n' ' ')
[ "$fds" = "0 0 1 1 2 2 " ] || fail "stray descriptors in workers: $(cat out)"
echo "worker process: own group, clean signals, fds 0-2 only"

# gpu without GPUs: a clear error, not a silent fallback.
CGRUN_NVML_LIBRARY=none HWLOC_XMLFILE= CUDA_VISIBLE_DEVICES= run --nproc-per-node=gpu --no-python true
rc=$?
[ $rc -eq 2 ] && grep -qi 'gpu' err || fail "--nproc-per-node=gpu without GPU: rc=$rc $(cat err)"
echo "gpu without GPUs: $(head -n 1 err)"
echo ok
