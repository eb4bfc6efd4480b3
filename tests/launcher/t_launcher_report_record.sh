#!/bin/sh
# The failure report of a real PyTorch @record failure (torch 1.13's
# torch.distributed.elastic error handler writes the error file): the
# exception's message and traceback are quoted.  Skips, saying why,
# without torch 1.13.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
PY=/usr/bin/python3
$PY -c 'import torch.distributed.elastic.multiprocessing.errors' 2>/dev/null ||
	skip "no torch 1.13 at $PY (Debian package python3-torch)"
cd "$T" || exit 1

cat > rec.py <<'P'
import os, time
from torch.distributed.elastic.multiprocessing.errors import record
@record
def main():
    if os.environ["LOCAL_RANK"] == "1":
        raise KeyError("missing shard 17")
    time.sleep(30)
main()
P
PYTHON_EXEC=$PY timeout 60 "$CGRUN_BIN" --nproc-per-node=2 rec.py > out 2> err
rc=$?
[ $rc -eq 1 ] || fail "@record job: status $rc, want 1: $(tail -20 err)"
grep -q "^  message: KeyError: 'missing shard 17'" err || fail "@record message: $(cat err)"
grep -q '^    .*raise KeyError' err || fail "@record traceback: $(cat err)"
echo "report from torch's @record"
echo ok
