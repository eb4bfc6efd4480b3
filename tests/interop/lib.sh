# Shared helpers of the interop scripts (tests/t_interop_*.sh,
# t_gloo_*.sh, t_client_vs_*.sh).  Sourced; expects CGRUN_TOP and
# CGRUN_BUILD.  Every wait has a deadline and says what it waited for.

TOP=${CGRUN_TOP:?CGRUN_TOP not set}
BUILD_DIR=${CGRUN_BUILD:?CGRUN_BUILD not set}
RDZVD=${CGRUN_RDZVD:-$BUILD_DIR/cgrun-rdzvd}
PY113=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-interop.XXXXXX")
PIDS=

# Kill what we started (by pid) and remove the temp dir.
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# skip REASON: exit 77 with the reason on the last line.
skip() {
	echo "$1"
	exit 77
}

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
	i=0
	while [ ! -s "$1" ]; do
		kill -0 "$2" 2>/dev/null || { echo "FAIL: $4: process $2 exited before writing $1"; exit 1; }
		[ "$i" -ge $(($3 * 20)) ] && { echo "FAIL: $4: nothing in $1 after $3 s"; exit 1; }
		sleep 0.05
		i=$((i + 1))
	done
}

# start_rdzvd: start cgrun-rdzvd on 127.0.0.1, port 0; sets RDZVD_PID and
# RDZVD_PORT (read from its port file).
start_rdzvd() {
	[ -x "$RDZVD" ] || { echo "FAIL: $RDZVD not built"; exit 1; }
	"$RDZVD" --listen 127.0.0.1 --port 0 --port-file "$T/rdzvd.port" \
		>"$T/rdzvd.log" 2>&1 &
	RDZVD_PID=$!
	PIDS="$PIDS $RDZVD_PID"
	wait_file "$T/rdzvd.port" "$RDZVD_PID" 20 "cgrun-rdzvd port"
	RDZVD_PORT=$(cat "$T/rdzvd.port")
}

# start_torch_server PYRUNNER: torch's own TCPStore server; sets TS_PID
# and TS_PORT.  Extra arguments go to torch_server.py.
start_torch_server() {
	runner=$1
	shift
	$runner "$TOP/tests/interop/torch_server.py" "$T/ts.port" "$@" \
		>"$T/ts.log" 2>&1 &
	TS_PID=$!
	PIDS="$PIDS $TS_PID"
	wait_file "$T/ts.port" "$TS_PID" 60 "torch TCPStore server port"
	TS_PORT=$(cat "$T/ts.port")
}

# build_tool NAME: compile tests/tools/NAME.c against libcgrun.a into $T.
build_tool() {
	${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$TOP/include" \
		-o "$T/$1" "$TOP/tests/tools/$1.c" "$BUILD_DIR/libcgrun.a" -lpthread ||
		{ echo "FAIL: cannot build tests/tools/$1.c"; exit 1; }
}
