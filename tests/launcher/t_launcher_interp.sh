#!/bin/sh
# Which interpreter runs the worker script (issue 17, item 3): an executable
# script whose #! line names python (directly or through env, found by
# path, in the current directory or on PATH) runs under $PYTHON_EXEC, as
# torchrun runs every script, not under the python its #! line finds
# first on PATH; a shell script and an ELF program run directly; with
# --no-python the #! line decides.  A fake $PYTHON_EXEC and a fake python3
# first on PATH record which one ran.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$T" || exit 1
mkdir bin venv
printf '#!/bin/sh\necho "PYTHON_EXEC $*"\n' > venv/python
printf '#!/bin/sh\necho "PATH-python3 $*"\n' > bin/python3
printf '#!/bin/sh\necho "PATH-python3.11 $*"\n' > bin/python3.11
chmod +x venv/python bin/python3 bin/python3.11
export PATH="$T/bin:$PATH" PYTHON_EXEC="$T/venv/python"
# run SCRIPT ARGS...: one worker; its console line (prefix "0:") in out.
run() { timeout 20 "$CGRUN_BIN" --log-prefix='${local_rank}:' "$@" > out 2> err ||
	fail "cgrun $* exited $?: $(cat err)"; }
# script NAME FIRST-LINE: an executable script.
script() { printf '%s\necho "direct $0"\n' "$2" > "$1" && chmod +x "$1"; }

script train '#!/usr/bin/env python3'
run ./train a b
grep -qx '0:PYTHON_EXEC -u ./train a b' out || fail "env python3 script: $(cat out err)"
run train a
grep -qx '0:PYTHON_EXEC -u train a' out || fail "script in . by name: $(cat out err)"
script train2 '#! /usr/bin/python3.11 -E'
run ./train2
grep -qx '0:PYTHON_EXEC -u ./train2' out || fail "python3.11 path: $(cat out err)"
script train3 '#!/usr/bin/env -S python3 -X dev'
run ./train3
grep -qx '0:PYTHON_EXEC -u ./train3' out || fail "env -S python3: $(cat out err)"
script bin/ptrain '#!/usr/bin/env python'
run ptrain x
grep -qx "0:PYTHON_EXEC -u $T/bin/ptrain x" out || fail "python script on PATH: $(cat out err)"
echo "python #! scripts run under \$PYTHON_EXEC"

# --no-python: the #! line decides (here the fake python3 on PATH).
run --no-python ./train a
grep -qx '0:PATH-python3 ./train a' out || fail "--no-python: $(cat out err)"
# Other scripts and ELF programs run directly.
script job.sh '#!/bin/sh'
run ./job.sh
grep -qx '0:direct ./job.sh' out || fail "shell script: $(cat out err)"
script pythonic '#!/usr/bin/env sh'
run ./pythonic
grep -qx '0:direct ./pythonic' out || fail "env sh script: $(cat out err)"
cp /bin/echo ./elf
run ./elf hi
grep -qx '0:hi' out || fail "ELF program: $(cat out err)"
echo "other scripts and programs run directly"
