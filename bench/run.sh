#!/bin/sh
# `make bench`: the benchmarks; each writes its tables under bench/results/.
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build} sh bench/store.sh
BUILD=${BUILD:-build} sh bench/launch.sh
BUILD=${BUILD:-build} sh bench/etcd.sh
