#!/bin/sh
# The daemon fits the sandbox its unit declares: every system call it makes
# in a realistic session (socket activation, notify, watchdog, config file,
# store and rendezvous clients, /metrics and /status, SIGTERM with an agent
# told) is allowed by the unit's SystemCallFilter= lines, and every socket
# family it opens is in RestrictAddressFamilies=.  Traced with strace.
# (Without the socket unit the daemon binds by itself, and glibc's
# getaddrinfo(AI_ADDRCONFIG) probes with an AF_NETLINK socket; the unit
# refuses it and glibc then assumes both IPv4 and IPv6, which is harmless.)
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
rdzvd=${CGRUN_RDZVD:-$top/build/cgrun-rdzvd}
unit=$top/rendezvous/systemd/cgrun-rdzvd.service
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
for t in strace systemd-analyze systemd-socket-activate; do
	command -v $t >/dev/null 2>&1 || { echo "$t not installed"; exit 77; }
done
strace -f -qq -o /dev/null true 2>/dev/null || { echo "strace cannot trace here (ptrace not permitted)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgrun-sandbox.XXXXXX") || exit 1
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0

# expand GROUP...: the system calls of systemd's @groups, nested ones too.
expand() {
	todo="$*" seen= out=
	while [ -n "$todo" ]; do
		set -- $todo; g=$1; shift; todo="$*"
		case " $seen " in *" $g "*) continue ;; esac
		seen="$seen $g"
		case $g in @*) ;; *) out="$out $g"; continue ;; esac
		for x in $(systemd-analyze syscall-filter "$g" | sed -n '2,$s/^ *\([@a-z_0-9-]*\)$/\1/p'); do
			todo="$todo $x"
		done
	done
	echo $out | tr ' ' '\n' | sort -u
}
allow=$(sed -n 's/^SystemCallFilter=\([^~].*\)/\1/p' "$unit")
deny=$(sed -n 's/^SystemCallFilter=~\(.*\)/\1/p' "$unit")
[ -n "$allow" ] || { echo "FAIL: no SystemCallFilter= allow list in the unit"; exit 1; }
expand $allow >"$tmp/allowed"
expand $deny >"$tmp/denied"
families=$(sed -n 's/^RestrictAddressFamilies=//p' "$unit")
echo "unit: SystemCallFilter=$allow ~$deny ($(wc -l <"$tmp/allowed") allowed, $(wc -l <"$tmp/denied") denied); RestrictAddressFamilies=$families"

# A session as systemd would run it: activated store + http sockets,
# NOTIFY_SOCKET, watchdog, the example configuration.
sport=$($tool freeport); hport=$($tool freeport)
$tool notify "$tmp/notify.sock" "$tmp/notify.log" 30 & pids="$pids $!"
$tool wait "$tmp/notify.log" '^listening' 5 >/dev/null || exit 1
# strace traces the activator, which execs the daemon in the same process
# (so LISTEN_PID matches); only what follows that execve counts.
strace -f -qq -o "$tmp/trace.all" systemd-socket-activate -l 127.0.0.1:"$sport" \
	-l 127.0.0.1:"$hport" --fdname=store:http \
	-E NOTIFY_SOCKET="$tmp/notify.sock" -E WATCHDOG_USEC=200000 \
	"$rdzvd" -v --config="$top/rendezvous/rdzvd.conf.example" >"$tmp/out" 2>"$tmp/err" &
a=$!; pids="$pids $a"
$tool wait "$tmp/err" 'Listening on 127.0.0.1:'"$hport" 5 >/dev/null || { cat "$tmp/err"; exit 1; }
$tool store 127.0.0.1 "$sport" || fail=1
$tool wait "$tmp/notify.log" 'READY=1' 10 >/dev/null || { echo "FAIL: no READY=1"; fail=1; }
$tool agent 127.0.0.1 "$sport" sandboxjob close >"$tmp/agent" 2>&1 & pids="$pids $!"
$tool wait "$tmp/agent" '^joined' 5 >/dev/null || { echo "FAIL: agent did not join"; fail=1; }
$tool http "http://127.0.0.1:$hport/metrics" >/dev/null || fail=1
$tool http "http://127.0.0.1:$hport/status" | grep -q sandboxjob || { echo "FAIL: /status"; fail=1; }
$tool wait "$tmp/notify.log" 'WATCHDOG=1' 5 >/dev/null || { echo "FAIL: no watchdog ping"; fail=1; }
# The daemon is strace's child (the activator, after its exec).
d=$(pgrep -P "$a" | head -n 1)
[ -n "$d" ] && grep -q cgrun-rdzvd "/proc/$d/cmdline" 2>/dev/null ||
	{ echo "FAIL: traced daemon not found under pid $a"; exit 1; }
grep -q 'adopted listener fd=3 name=store' "$tmp/err" ||
	{ echo "FAIL: not socket-activated"; cat "$tmp/err"; fail=1; }
# SIGINT: the stop that tells agents their jobs are over (it does all that
# SIGTERM, a restart that only closes the connections, does, and more).
kill -INT "$d"
$tool wait "$tmp/agent" '^FAIL 4' 5 >/dev/null || { echo "FAIL: agent not told"; fail=1; }
i=0; while kill -0 "$a" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
wait "$a"; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: daemon exit $rc"; cat "$tmp/err"; fail=1; }

# What it used, from its exec on (the loader's calls count too).
sed -n '/execve("[^"]*cgrun-rdzvd"/,$p' "$tmp/trace.all" >"$tmp/trace"
[ -s "$tmp/trace" ] || { echo "FAIL: no execve of cgrun-rdzvd in the trace"; exit 1; }
sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$tmp/trace" | sort -u >"$tmp/used"
echo "$(wc -l <"$tmp/used") distinct system calls: $(tr '\n' ' ' <"$tmp/used")"
bad=$(comm -23 "$tmp/used" "$tmp/allowed")
[ -z "$bad" ] || { echo "FAIL: not in the allow list: $bad"; fail=1; }
bad=$(comm -12 "$tmp/used" "$tmp/denied")
[ -z "$bad" ] || { echo "FAIL: in the deny list: $bad"; fail=1; }
for f in $(sed -n 's/.* socket(\(AF_[A-Z0-9]*\),.*/\1/p' "$tmp/trace" | sort -u); do
	case " $families " in *" $f "*) echo "ok: socket family $f allowed" ;;
		*) echo "FAIL: socket family $f not in RestrictAddressFamilies"; fail=1 ;; esac
done
[ $fail -eq 0 ] && echo "ok: every system call and socket family fits the unit's sandbox"
exit $fail
