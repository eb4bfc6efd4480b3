#!/bin/sh
# Checkpoint crash safety at every step of a save: strace kills the writer
# (SIGKILL on entry) at the k-th call of each system call a save makes:
# creating the temporary file, writing it, fsync, rename, fsync of the
# directory, pruning.  After every kill the set must hold only complete
# files, the newest must load with the right payload, and no completed
# checkpoint may be lost.  (tests/libcgrun/test_checkpoint.c adds 100 kills at
# random times.)
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
b=$BUILD_DIR
command -v strace >/dev/null 2>&1 || skip "strace missing (apt-get install strace)"
cc -O2 -Wall -Wextra -Werror -I"$top/include" -o "$T/w" \
    "$top/tests/libcgrun/libapi_ckpt_writer.c" "$b/libcgrun.a" ||
	fail "writer does not build"
strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace not permitted)"

d=$T/ckpt
last=0 kills=0
for sc in openat writev fsync renameat unlinkat; do
	for when in 1 2 3 4 5 6 7 8; do
		strace -f -o /dev/null -e trace="$sc" -e inject="$sc:signal=SIGKILL:when=$when" \
		    "$T/w" "$d" save 4 >/dev/null 2>&1
		rc=$?
		[ $rc -eq 137 ] && kills=$((kills + 1))
		now=$("$T/w" "$d" verify 2>"$T/verify.err") ||
			{ ls -la "$d"; fail "after a kill at $sc #$when: $(cat "$T/verify.err")"; }
		[ "$now" -ge "$last" ] ||
			fail "newest step went back from $last to $now (kill at $sc #$when)"
		last=$now
	done
done
# Without a kill the writer finishes and the set is clean.
"$T/w" "$d" save 3 || fail "writer without kill"
now=$("$T/w" "$d" verify) || exit 1
[ "$now" -eq $((last + 3)) ] || fail "newest $now, want $((last + 3))"
n=$(ls "$d" | grep -c '^w-.*\.ckpt$')
[ "$n" -eq 2 ] || { ls -la "$d"; fail "$n checkpoint files, keep is 2"; }
[ -z "$(ls -A "$d" | grep '\.tmp\.')" ] || { ls -la "$d"; fail "stale temporary files left"; }
[ $kills -ge 30 ] || fail "only $kills runs were killed"
echo "ok: $kills kills at openat/writev/fsync/renameat/unlinkat points, never a torn or lost checkpoint (newest $now)"
