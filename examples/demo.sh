#!/bin/sh
# The README's main command: sh examples/demo.sh
#
# Sets everything up and runs the PyTorch DDP example (examples/ddp/train.py,
# CPU, gloo) under `cgrun --standalone --nproc-per-node=4` with a worker crash
# injected at a random step in a random rank.  cgrun stops the group, starts
# attempt 1, the workers resume from the newest checkpoint, and the job ends
# with the same final weights as a run without the crash (checked by running
# that one too).  Nothing to start by hand: the store is embedded in cgrun.
#
# Installs missing Debian packages (tests/deps.sh, minimal set; needs root),
# builds with make, finds a Python with torch: $PYTHON_EXEC if set, else
# `python3` on PATH, else Debian's /usr/bin/python3 (python3-torch).
#
# Environment: CRASH_AT_STEP, CRASH_RANK (default random), STEPS (60),
# DEMO_DIR (default a new /tmp/cgrun-demo.XXXXXX, kept), DEMO_REFERENCE=0
# skips the uninterrupted comparison run, BUILD (build directory, "build").
set -e
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
STEPS=${STEPS:-60}
EVERY=5
NPROC=4

say() { printf '\n== %s\n' "$*"; }

say "1/5 dependencies: CGRUN_DEPS_MINIMAL=1 sh tests/deps.sh"
CGRUN_DEPS_MINIMAL=1 sh tests/deps.sh

say "2/5 build: make $BUILD/cgrun"
make -s -j"$(nproc)" BUILD="$BUILD" "$BUILD/cgrun"
CGRUN=$BUILD/cgrun

say "3/5 Python with torch"
PY=
for p in "${PYTHON_EXEC:-}" python3 /usr/bin/python3; do
	[ -n "$p" ] || continue
	if "$p" -c 'import torch.distributed' >/dev/null 2>&1; then PY=$(command -v "$p"); break; fi
	echo "($p: no torch)"
done
if [ -z "$PY" ]; then
	echo "demo: no Python interpreter with torch found." >&2
	echo "demo: install Debian's python3-torch (apt-get install python3-torch) or set" >&2
	echo "demo: PYTHON_EXEC=/path/to/python3 (one where 'import torch' works)." >&2
	exit 1
fi
echo "PYTHON_EXEC=$PY (torch $("$PY" -c 'import torch; print(torch.__version__)'))"
export PYTHON_EXEC="$PY"

DIR=${DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/cgrun-demo.XXXXXX")}
rm -rf "$DIR/crash" "$DIR/plain"
mkdir -p "$DIR/crash" "$DIR/plain"
if [ -z "${CRASH_AT_STEP:-}" ] || [ -z "${CRASH_RANK:-}" ]; then
	set -- $(od -An -N4 -tu2 /dev/urandom)
	CRASH_AT_STEP=${CRASH_AT_STEP:-$((EVERY + 1 + $1 % (STEPS - EVERY - 2)))}
	CRASH_RANK=${CRASH_RANK:-$(($2 % NPROC))}
fi
export CRASH_AT_STEP CRASH_RANK

# job OUTDIR [CGRUN-OPTIONS]: the example under cgrun, output shown without
# the placement lines of -v; returns cgrun's exit status.
job() {
	out=$1; shift
	set +e
	{ "$CGRUN" "$@" --log-prefix=rank --standalone --nproc-per-node=$NPROC --max-restarts=3 \
		examples/ddp/train.py --steps "$STEPS" --ckpt-every $EVERY \
		--ckpt-dir "$out/ckpt" --out "$out/final.pt" 2>&1
	  echo $? > "$out/status"; } | tee "$out/log" | grep -v '^cgrun: placement '
	set -e
	return "$(cat "$out/status")"
}

say "4/5 run with a crash injected before step $CRASH_AT_STEP in rank $CRASH_RANK"
echo "CRASH_AT_STEP=$CRASH_AT_STEP CRASH_RANK=$CRASH_RANK $CGRUN -v --standalone --nproc-per-node=$NPROC --max-restarts=3 examples/ddp/train.py --ckpt-dir $DIR/crash/ckpt ..."
echo
if ! job "$DIR/crash" -v; then
	echo "demo: the job failed (cgrun exit $(cat "$DIR/crash/status")); log: $DIR/crash/log" >&2
	exit 1
fi

digest() { sed -n 's/^\[rank0\]:final step=[0-9]* loss=[^ ]* sha256=\([0-9a-f]*\)$/\1/p' "$1/log"; }
restarts=$(grep -c '^cgrun: workers started attempt=[1-9]' "$DIR/crash/log" || true)
resumed=$(sed -n 's/^\[rank0\]:attempt [1-9][0-9]*: //p' "$DIR/crash/log" | head -n 1)
a=$(digest "$DIR/crash")

if [ "${DEMO_REFERENCE:-1}" != 0 ]; then
	say "5/5 the same job without the crash, for comparison (output in $DIR/plain/log)"
	( unset CRASH_AT_STEP CRASH_RANK; job "$DIR/plain" ) >/dev/null ||
		{ echo "demo: the reference job failed; log: $DIR/plain/log" >&2; exit 1; }
	b=$(digest "$DIR/plain")
fi

say "result"
echo "crash injected:     rank $CRASH_RANK before step $CRASH_AT_STEP (exit 13)"
echo "restarts by cgrun:  $restarts"
echo "attempt 1:          ${resumed:-?}"
echo "final weights:      $DIR/crash/final.pt"
echo "sha256 with crash:  $a"
if [ -n "${b:-}" ]; then
	echo "sha256 no crash:    $b"
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		echo "identical: the resumed run replayed exactly what the crash interrupted"
	else
		echo "DIFFERENT final weights (unexpected; logs in $DIR)"
		exit 1
	fi
fi
