#!/bin/sh
# The README's test command: install what is missing, build, run the whole
# suite.  Usage: sh tests/run.sh   (from the top of the source tree)
set -e
cd "$(dirname "$0")/.."
sh tests/deps.sh
make -j"$(nproc)" tests
exec make check
