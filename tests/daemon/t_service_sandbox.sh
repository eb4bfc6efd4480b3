#!/bin/sh
# The daemon fits the sandbox its unit declares: every system call it makes
# in a realistic session (socket activation, notify, watchdog, config file,
# store and rendezvous clients, /metrics and /status, SIGTERM with an agent
# told) is allowed by the unit's SystemCallFilter= lines, and every socket
# family it opens is in RestrictAddressFamilies=.  Traced with strace.
# (Without the socket unit the daemon binds by itself, and glibc's
# getaddrinfo(AI_ADDRCONFIG) probes with an AF_NETLINK socket; the unit
# refuses it and glibc then assumes both IPv4 and IPv6, which is harmless.)
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
rdzvd=$RDZVD
unit=$top/rendezvous/systemd/cgrun-rdzvd.service
py=/usr/bin/python3; [ -x $py ] || py=python3
tool="$py $top/tests/daemon/service_tool.py"
for t in strace systemd-analyze systemd-socket-activate; do
	command -v $t >/dev/null 2>&1 || skip "$t not installed"
done
strace -f -qq -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace not permitted)"
tmp=$T

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
[ -n "$allow" ] || fail "no SystemCallFilter= allow list in the unit"
expand $allow >"$tmp/allowed"
expand $deny >"$tmp/denied"
families=$(sed -n 's/^RestrictAddressFamilies=//p' "$unit")
echo "unit: SystemCallFilter=$allow ~$deny ($(wc -l <"$tmp/allowed") allowed, $(wc -l <"$tmp/denied") denied); RestrictAddressFamilies=$families"

# A session as systemd would run it: activated store + http sockets,
# NOTIFY_SOCKET, watchdog, the example configuration.
sport=$(free_port); hport=$(free_port)
$tool notify "$tmp/notify.sock" "$tmp/notify.log" 30 & track $!
$tool wait "$tmp/notify.log" '^listening' 5 >/dev/null || exit 1
# strace traces the activator, which execs the daemon in the same process
# (so LISTEN_PID matches); only what follows that execve counts.
strace -f -qq -o "$tmp/trace.all" systemd-socket-activate -l 127.0.0.1:"$sport" \
	-l 127.0.0.1:"$hport" --fdname=store:http \
	-E NOTIFY_SOCKET="$tmp/notify.sock" -E WATCHDOG_USEC=200000 \
	"$rdzvd" -v --config="$top/rendezvous/rdzvd.conf.example" >"$tmp/out" 2>"$tmp/err" &
a=$!; track $a
$tool wait "$tmp/err" 'Listening on 127.0.0.1:'"$hport" 5 >/dev/null || { cat "$tmp/err"; exit 1; }
$tool store 127.0.0.1 "$sport" || fail_later "the TCPStore client"
$tool wait "$tmp/notify.log" 'READY=1' 10 >/dev/null || fail_later "no READY=1"
$tool agent 127.0.0.1 "$sport" sandboxjob close >"$tmp/agent" 2>&1 & track $!
$tool wait "$tmp/agent" '^joined' 5 >/dev/null || fail_later "agent did not join"
$tool http "http://127.0.0.1:$hport/metrics" >/dev/null || fail_later "/metrics"
$tool http "http://127.0.0.1:$hport/status" | grep -q sandboxjob || fail_later "/status"
$tool wait "$tmp/notify.log" 'WATCHDOG=1' 5 >/dev/null || fail_later "no watchdog ping"
# The daemon is strace's child (the activator, after its exec).
d=$(pgrep -P "$a" | head -n 1)
[ -n "$d" ] && grep -q cgrun-rdzvd "/proc/$d/cmdline" 2>/dev/null ||
	fail "traced daemon not found under pid $a"
grep -q 'adopted listener fd=3 name=store' "$tmp/err" ||
	{ fail_later "not socket-activated"; cat "$tmp/err"; }
# SIGINT: the stop that tells agents their jobs are over (it does all that
# SIGTERM, a restart that only closes the connections, does, and more).
kill -INT "$d"
$tool wait "$tmp/agent" '^FAIL 4' 5 >/dev/null || fail_later "agent not told"
i=0; while kill -0 "$a" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
wait "$a"; rc=$?
[ $rc -eq 0 ] || { fail_later "daemon exit $rc"; cat "$tmp/err"; }

# What it used, from its exec on (the loader's calls count too).
sed -n '/execve("[^"]*cgrun-rdzvd"/,$p' "$tmp/trace.all" >"$tmp/trace"
[ -s "$tmp/trace" ] || fail "no execve of cgrun-rdzvd in the trace"
sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$tmp/trace" | sort -u >"$tmp/used"
echo "$(wc -l <"$tmp/used") distinct system calls: $(tr '\n' ' ' <"$tmp/used")"
bad=$(comm -23 "$tmp/used" "$tmp/allowed")
[ -z "$bad" ] || fail_later "not in the allow list: $bad"
bad=$(comm -12 "$tmp/used" "$tmp/denied")
[ -z "$bad" ] || fail_later "in the deny list: $bad"
for f in $(sed -n 's/.* socket(\(AF_[A-Z0-9]*\),.*/\1/p' "$tmp/trace" | sort -u); do
	case " $families " in *" $f "*) echo "ok: socket family $f allowed" ;;
		*) fail_later "socket family $f not in RestrictAddressFamilies" ;; esac
done
no_failures && echo "ok: every system call and socket family fits the unit's sandbox"
