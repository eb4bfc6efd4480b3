# Helpers of the hang tests (tests/hang/t_hang_*.sh): a 4-rank DDP job
# (tests/hang/hang_train.py, examples/ddp/train.py with a hang injected)
# under cgrun, and the checks of cgrun's hang diagnosis.  Sourced after
# tests/lib.sh and tests/interop/lib.sh (T, fail, skip, need_torch*).

HANG_TRAIN=$TOP/tests/hang/hang_train.py
HANG_STEPS=20


# need_watchdog: skip unless cgrun has the hang watchdog (--hang-timeout).
need_watchdog() {
	"$CGRUN" --help 2>&1 | grep -q -- '--hang-timeout' ||
		skip "cgrun has no --hang-timeout (the hang watchdog is not built in)"
}

# ddp_run NAME PYCMD CGRUN-ARGS [ENV...]: the DDP job on one node, 4 ranks,
# one restart allowed; output in $T/NAME.log, files in $T/NAME/.  PYCMD
# is the interpreter's command (words), CGRUN-ARGS extra options (words).
ddp_run() {
	name=$1 pycmd=$2 args=$3
	shift 3
	mkdir -p "$T/$name"
	# shellcheck disable=SC2086
	env "$@" timeout 300 "$CGRUN" -v --log-prefix=rank --standalone --nproc-per-node=4 \
		--max-restarts=1 --log-dir="$T/$name/logs" $args --no-python $pycmd \
		"$HANG_TRAIN" --steps $HANG_STEPS --ckpt-every 4 \
		--ckpt-dir "$T/$name/ckpt" --out "$T/$name/final.pt" \
		>"$T/$name.log" 2>&1 </dev/null
	rc=$?
	[ $rc -eq 0 ] || { tail -n 40 "$T/$name.log"; fail "$name: cgrun exited $rc"; }
}

# digest LOG: the final weights' sha256 rank 0 printed.
digest() {
	sed -n 's/^\[rank0\]:final step=[0-9]* loss=[^ ]* sha256=\([0-9a-f]*\)$/\1/p' "$1"
}

# check_diagnosis LOG NODE RANK FUNC FILE: cgrun's own lines name RANK on
# NODE as the root cause in FUNC with FILE:LINE, the stacks file they name
# holds every rank's stack, and nothing was killed before the diagnosis.
check_diagnosis() {
	log=$1 node=$2 rank=$3 func=$4 file=$5
	grep -q "^cgrun: hang on node $node: root cause: rank $rank in .*$func ($file:[0-9]*)" "$log" ||
		{ grep '^cgrun' "$log" | tail -n 20; fail "no root cause rank $rank in $func ($file:N) on node $node"; }
	stacks=$(sed -n "s/^cgrun: hang on node $node: every rank's stacks: //p" "$log" | head -n 1)
	[ -f "$stacks" ] || fail "no stacks file named (or missing: '$stacks')"
	grep -q "^=== rank $rank (local_rank [0-9]*, pid [0-9]*), " "$stacks" || fail "rank $rank not in $stacks"
	grep -A30 "^=== rank $rank " "$stacks" | grep -q "$func" || fail "$func not in rank $rank's stack in $stacks"
	# every local rank of the node has its stack
	n=$(grep -c '^=== rank ' "$stacks")
	[ "$n" -ge 1 ] || fail "no rank in $stacks"
	if grep -q '^no stack: ' "$stacks"; then cat "$stacks"; fail "a rank without stack in $stacks"; fi
	# nothing was stopped (TERM or KILL) before the diagnosis was printed
	d=$(grep -n "^cgrun: hang on node $node: stacks: " "$log" | head -n 1 | cut -d: -f1)
	k=$(grep -n 'worker exited .*signal \(9\|15\) ' "$log" | head -n 1 | cut -d: -f1)
	[ -n "$d" ] || fail "no diagnosis line"
	[ -z "$k" ] || [ "$k" -gt "$d" ] || fail "a worker was stopped before the stacks were taken (line $k < $d)"
	echo "diagnosis: $(grep "^cgrun: hang on node $node: stacks: " "$log" | head -n 1)"
}

# check_restarted_once LOG
check_restarted_once() {
	grep -q 'workers started attempt=1 ' "$1" || { tail -n 30 "$1"; fail "no second attempt in $1"; }
	if grep -q 'workers started attempt=2 ' "$1"; then fail "more than one restart in $1"; fi
}

# ddp_hang_suite PYCMD LABEL [SECONDS]: a plain run, then the hang caught
# through torch's FileTimer (expires(after=SECONDS)) and through
# --hang-timeout=SECONDS with output as progress (default 10, as in the
# issue: a shorter one can fire while a loaded machine resumes from the
# checkpoint); each names rank 2 in hang_here, restarts once, ends with
# the same weights.
ddp_hang_suite() {
	pycmd=$1 label=$2 secs=${3:-10}
	ddp_run plain "$pycmd" ""
	a=$(digest "$T/plain.log")
	[ -n "$a" ] || fail "plain run printed no digest"
	echo "plain sha256=$a"

	hang_case filetimer "FileTimer expires(after=$secs)" "" \
		TORCHELASTIC_ENABLE_FILE_TIMER=1 HANG_FILETIMER=$secs
	hang_case output "--hang-timeout=$secs --hang-progress=output" \
		"--hang-timeout=$secs --hang-progress=output" HANG_PRINT=1
}

# hang_case NAME WHAT CGRUN-ARGS [ENV...]: rank 2 hangs before step 12;
# cgrun names it, restarts once, and the weights are the plain run's ($a).
hang_case() {
	name=$1 what=$2 args=$3
	shift 3
	ddp_run "$name" "$pycmd" "$args" "$@" HANG_AT_STEP=12 HANG_RANK=2
	grep -q 'rank 2: hanging before step 12' "$T/$name.log" || fail "$name: no hang injected"
	check_diagnosis "$T/$name.log" 0 2 hang_here hang_train.py
	check_restarted_once "$T/$name.log"
	b=$(digest "$T/$name.log")
	[ "$a" = "$b" ] || fail "$name: final weights differ ($b, want $a)"
	echo "ok: $label: $what caught rank 2's hang, one restart, same weights"
}
