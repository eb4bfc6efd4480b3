# Shared helpers of the interop scripts (tests/interop/t_*.sh) and of
# most black-box scripts that run cgrun-rdzvd or torch.  Sourced after
# tests/lib.sh (TOP, BUILD_DIR, RDZVD, T, track, fail, skip).  Every wait
# has a deadline and says what it waited for.

PY113=/usr/bin/python3

# need_torch113: skip unless Debian's python3 has torch 1.13 with gloo.
need_torch113() {
	v=$("$PY113" -c 'import torch, torch.distributed as d; assert d.is_available(); print(torch.__version__)' 2>/dev/null) ||
		skip "torch 1.13 not importable by $PY113 (apt-get install python3-torch)"
	case "$v" in 1.13*) ;; *) skip "$PY113 has torch $v, not 1.13" ;; esac
}

# need_torch26: fetch torch 2.6 once (tests/torch26.sh) or skip saying why.
need_torch26() {
	why=$(sh "$TOP/tests/torch26.sh" --ensure 2>&1) || skip "torch 2.6 unavailable: $(echo "$why" | tail -n 1)"
}

# py26 ARGS: run torch 2.6's python.
py26() {
	sh "$TOP/tests/torch26.sh" "$@"
}

# wait_file FILE PID SECS WHAT: wait until FILE is non-empty; fail if PID
# died first or SECS passed.
wait_file() {
	wf_file=$1 wf_pid=$2 wf_what=$4
	wait_for "$3" "$4: something in $1" wf_written
}
wf_written() {
	[ -s "$wf_file" ] && return 0
	alive "$wf_pid" || fail "$wf_what: process $wf_pid exited before writing $wf_file"
	return 1
}

# start_rdzvd: start cgrun-rdzvd in the foreground on 127.0.0.1, port 0;
# sets RDZVD_PID and RDZVD_PORT (from its "listening on HOST:PORT" line).
start_rdzvd() {
	[ -x "$RDZVD" ] || fail "$RDZVD not built"
	"$RDZVD" -d --host 127.0.0.1 --port 0 "$@" >"$T/rdzvd.out" 2>"$T/rdzvd.log" &
	RDZVD_PID=$!
	track $RDZVD_PID
	wait_for 20 "cgrun-rdzvd's 'listening on' line" rdzvd_listening
	RDZVD_PORT=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$T/rdzvd.out" | head -n 1)
	[ -n "$RDZVD_PORT" ] || fail "cannot parse port from: $(cat "$T/rdzvd.out")"
}
rdzvd_listening() {
	grep -q '^listening on ' "$T/rdzvd.out" && return 0
	alive "$RDZVD_PID" || { cat "$T/rdzvd.log"; fail "cgrun-rdzvd exited before listening"; }
	return 1
}

# start_torch_server PYRUNNER: torch's own TCPStore server; sets TS_PID
# and TS_PORT.  Extra arguments go to torch_server.py.
start_torch_server() {
	runner=$1
	shift
	$runner "$TOP/tests/interop/torch_server.py" "$T/ts.port" "$@" \
		>"$T/ts.log" 2>&1 &
	TS_PID=$!
	track $TS_PID
	wait_file "$T/ts.port" "$TS_PID" 60 "torch TCPStore server port"
	TS_PORT=$(cat "$T/ts.port")
}

# build_tool NAME: compile tests/interop/NAME.c against libcgrun.a into $T.
build_tool() {
	${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$TOP/include" \
		-o "$T/$1" "$TOP/tests/interop/$1.c" "$BUILD_DIR/libcgrun.a" -lpthread ||
		fail "cannot build tests/interop/$1.c"
}

# gloo_job RUNNER PORT: 4 gloo workers against the store at 127.0.0.1:PORT;
# fails unless every worker reports the right results within 120 s.
gloo_job() {
	runner=$1 port=$2 pids=
	for r in 0 1 2 3; do
		RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 LOCAL_WORLD_SIZE=4 GROUP_RANK=0 \
		MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
		TORCHELASTIC_USE_AGENT_STORE=True TORCHELASTIC_RESTART_COUNT=0 \
		TORCHELASTIC_RUN_ID=cgrun-test OMP_NUM_THREADS=1 \
			timeout 120 $runner "$TOP/tests/interop/gloo.py" >"$T/gloo.$r.log" 2>&1 &
		pids="$pids $!"
	done
	track $pids
	bad=0 r=0
	for p in $pids; do
		wait "$p"
		rc=$?
		[ "$rc" -eq 0 ] || { bad=1; echo "FAIL: rank $r exited $rc:"; tail -n 15 "$T/gloo.$r.log"; }
		r=$((r + 1))
	done
	grep -h ' ok: ' "$T"/gloo.*.log
	[ "$bad" -eq 0 ] && [ "$(grep -l ' ok: ' "$T"/gloo.*.log | wc -l)" -eq 4 ]
}
