#!/bin/sh
# `make bench`: every benchmark; each writes its tables under bench/results/.
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build} sh bench/store.sh
BUILD=${BUILD:-build} sh bench/launch.sh
