#!/bin/sh
# Restarts get a fresh, empty store: keys and counters set by the workers of
# attempt 0 are gone in attempt 1 (same port).  The workers are real
# TCPStore clients (torch 1.13's); without them the test skips, saying why.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
PY=/usr/bin/python3
$PY -c 'import torch.distributed' 2>/dev/null ||
	skip "no torch 1.13 at $PY (Debian package python3-torch)"
cd "$T" || exit 1

# Attempt 0: both ranks set a key and count; rank 1 fails.  Attempt 1 must
# see neither the counter nor the keys.
cat > store.py <<'P'
import os, sys, datetime
from torch.distributed import TCPStore
s = TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
             timeout=datetime.timedelta(seconds=20))
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
if attempt == 0:
    s.set("k" + os.environ["RANK"], "old")
    s.add("n", 1)
    s.wait(["k0", "k1"])
    sys.exit(4 if os.environ["RANK"] == "1" else 0)
n = s.add("n", 0)
assert n == 0, "stale counter n=%d from attempt 0" % n
s.set_timeout(datetime.timedelta(milliseconds=200))
try:
    s.get("k0")
    sys.exit("stale key k0 from attempt 0")
except RuntimeError:
    pass
print("fresh", attempt)
P
PYTHON_EXEC=$PY timeout 60 "$CGRUN_BIN" --nproc-per-node=2 --max-restarts=1 store.py > out 2> err ||
	fail "store job failed: $(tail -20 err)"
[ "$(grep -c 'fresh 1' out)" = 2 ] || fail "attempt 1 did not see a fresh store: $(cat out err)"
echo "fresh store per attempt"
echo ok
