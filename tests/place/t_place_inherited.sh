#!/bin/sh
# Placement stays within the cpus cgrun inherited (taskset here; srun
# --cpu-bind, numactl or a container in real life): on the live machine,
# under `taskset -c LAST`, every worker's kernel affinity (Cpus_allowed_list)
# is that cpu, the -v plan says why, and the workers run; without taskset the
# same plan spreads the ranks over the cpus.  Needs 2 cpus.
set -u
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
export CGRUN_NVML_LIBRARY=none
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER HWLOC_XMLFILE
command -v taskset >/dev/null 2>&1 || skip "taskset (util-linux) is not installed"
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
ncpu=$(getconf _NPROCESSORS_ONLN)
[ "$ncpu" -ge 2 ] && [ "$mine" = "0-$((ncpu - 1))" ] ||
    skip "needs 2 or more cpus, all allowed (have $ncpu, allowed $mine)"
out=$T
cat >"$out/w.sh" <<'W'
aff=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
echo "lr=$LOCAL_RANK aff=$aff plan=${CGRUN_CPUSET:-unset}"
W
last=$((ncpu - 1))

for mode in cores numa; do
	timeout 60 taskset -c "$last" "$CGRUN_BIN" -v --nproc-per-node=2 \
	    --cpu-bind=$mode --no-python sh "$out/w.sh" >"$out/run" 2>"$out/err" ||
	    fail_later "$mode under taskset: $(tail -3 "$out/err")"
	n=$(grep -c "aff=$last plan=$last\$" "$out/run")
	[ "$n" -eq 2 ] || fail_later "$mode: want 2 workers on cpu $last, got: $(cat "$out/run")"
	grep -q "cpus_allowed=$last cpus_allowed_by=\"inherited affinity\"" "$out/err" ||
	    fail_later "$mode: -v does not say the plan was limited: $(grep placement "$out/err")"
done

# Without taskset: the ranks are spread, not limited, and nothing says so.
timeout 60 "$CGRUN_BIN" -v --nproc-per-node=2 --cpu-bind=cores --no-python \
    sh "$out/w.sh" >"$out/run" 2>"$out/err" || fail_later "cores: $(tail -3 "$out/err")"
[ "$(sed -n 's/.*aff=\([^ ]*\) .*/\1/p' "$out/run" | sort -u | wc -l)" -eq 2 ] ||
    fail_later "cores without taskset: ranks not spread: $(cat "$out/run")"
grep -q cpus_allowed "$out/err" && fail_later "unlimited plan says cpus_allowed"

# --cpu-bind=none: nothing bound, the workers keep the inherited affinity.
timeout 60 taskset -c "$last" "$CGRUN_BIN" --nproc-per-node=2 --cpu-bind=none \
    --no-python sh "$out/w.sh" >"$out/run" 2>"$out/err" || fail_later "none"
[ "$(grep -c "aff=$last plan=unset" "$out/run")" -eq 2 ] || fail_later "none: $(cat "$out/run")"

