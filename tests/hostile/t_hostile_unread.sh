#!/bin/sh
# Clients that ask for large values and never read the replies
# (tests/hostile/unread_replies.py): one is paused at --output-high-water
# and kept, many are cut at --max-output-total (the worst first, logged
# with its bytes); the daemon's RSS stays bounded and a healthy client
# gets the right value throughout.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/daemon/lib.sh"

daemon_start unread --max-value-size=1M --output-high-water=2M \
    --max-output-total=16M
timeout 60 "$PY" "$CGRUN_TOP/tests/hostile/unread_replies.py" "$port" "$pid" \
    "$tmp/log" || fail unread
daemon_stop unread
exit 0
