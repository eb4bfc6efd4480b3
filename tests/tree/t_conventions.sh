#!/bin/sh
# The black-box scripts keep tests/lib.sh's promises (tests/README.md):
# every tests/**/t_*.sh sources tests/lib.sh; no script or area library
# sets its own EXIT trap (it would replace the one that stops what the
# test started and removes its T: at_exit is for that) or defines its
# own fail, skip, cleanup, wait_for or poll_for.  Left out: the runner,
# tests/run.sh, tests/deps.sh, tests/torch26.sh and tests/etcd/cluster.sh,
# programs of their own (the last run by tests and benchmarks alike).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$TOP" || exit 2
n=0
for f in $(find tests -name 't_*.sh' | sort); do
	n=$((n + 1))
	grep -q '/tests/lib\.sh"' "$f" || fail_later "$f does not source tests/lib.sh"
done
for f in $(find tests -name '*.sh' ! -path tests/lib.sh ! -path tests/etcd/cluster.sh \
    ! -path tests/run.sh ! -path tests/run-suite.sh ! -path tests/deps.sh \
    ! -path tests/torch26.sh | sort); do
	grep -n -E '^[[:space:]]*trap .*[[:space:]]EXIT([[:space:];]|$)' "$f" |
		sed "s|^|$f:|" | grep . &&
		fail_later "$f sets an EXIT trap (use at_exit)"
	grep -n -E '^[[:space:]]*(fail|skip|cleanup|wait_for|poll_for)[[:space:]]*\(\)' "$f" |
		sed "s|^|$f:|" | grep . &&
		fail_later "$f defines its own copy of a tests/lib.sh function"
done
no_failures && echo "conventions ok: $n scripts source tests/lib.sh; no EXIT trap, no copied helper"
