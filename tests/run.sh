#!/bin/sh
# The README's test command: install what is missing, build, run the whole
# suite.  Usage: sh tests/run.sh   (from the top of the source tree)
set -e
cd "$(dirname "$0")/.."
sh tests/deps.sh
make -j"$(nproc)" tests
rc=0
make check || rc=1
# The sanitizer pass (ASan+UBSan, LeakSanitizer): every Check program and
# the black-box scripts of the store, launcher and multi-node flows that
# run without torch 2.6 (docs/fuzzing.md says why these and how long).
# CGRUN_SKIP_SANITIZE=1 leaves it out.
[ "${CGRUN_SKIP_SANITIZE:-0}" = 1 ] && exit $rc
SAN="BUILD=build-asan SANITIZE=address,undefined"
make -j"$(nproc)" $SAN tests
for suite in test_ t_store_adversarial t_abuse_emfile t_client_vs_rdzvd \
    t_launcher_restart t_launcher_signals t_launcher_env t_launcher_output \
    t_multinode_basic t_multinode_restart t_multinode_elastic; do
	make check $SAN SUITE=$suite || rc=1
done
exit $rc
