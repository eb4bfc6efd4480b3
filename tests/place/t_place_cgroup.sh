#!/bin/sh
# Placement stays within the cgroup cpuset cgrun runs in (what Slurm's
# task/cgroup, a container or systemd's AllowedCPUs= give it): in a fresh
# cpuset cgroup holding only the last cpu, every worker's kernel affinity
# (Cpus_allowed_list) is that cpu, they share it, and the -v plan says the
# cgroup limited it.  Needs root, a cpuset cgroup controller (v1 or v2) and
# 2 cpus.
set -u
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
export CGRUN_NVML_LIBRARY=none
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER HWLOC_XMLFILE
[ "$(id -u)" -eq 0 ] || skip "needs root to make a cpuset cgroup"
mine=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
ncpu=$(getconf _NPROCESSORS_ONLN)
[ "$ncpu" -ge 2 ] && [ "$mine" = "0-$((ncpu - 1))" ] ||
    skip "needs 2 or more cpus, all allowed (have $ncpu, allowed $mine)"
enabled=	# v2: the controller this test enabled, disabled again at exit
if [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
	top=/sys/fs/cgroup/cpuset; v=1
elif grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
    { grep -qw cpuset /sys/fs/cgroup/cgroup.subtree_control ||
    { echo +cpuset >/sys/fs/cgroup/cgroup.subtree_control && enabled=1; }; } 2>/dev/null; then
	top=/sys/fs/cgroup; v=2
else
	skip "no cpuset cgroup controller to use"
fi
last=$((ncpu - 1))
cg="$top/cgrun-test-place-$$"
out=$T
trap 'rmdir "$cg" 2>/dev/null; rm -rf "$out"
    [ -z "$enabled" ] || echo -cpuset >"$top/cgroup.subtree_control" 2>/dev/null' EXIT
# v1 needs the memory nodes written too; v2 inherits them when left empty.
{ mkdir "$cg" && echo "$last" >"$cg/cpuset.cpus" &&
    { [ $v = 2 ] || cat "$top/cpuset.effective_mems" >"$cg/cpuset.mems"; }; } 2>/dev/null ||
    skip "cannot make a cpuset cgroup under $top"
cat >"$out/w.sh" <<'W'
aff=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
echo "lr=$LOCAL_RANK aff=$aff plan=${CGRUN_CPUSET:-unset}"
W

for mode in cores numa; do
	timeout 60 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh \
	    "$cg" "$CGRUN_BIN" -v --nproc-per-node=2 --cpu-bind=$mode \
	    --no-python sh "$out/w.sh" >"$out/run" 2>"$out/err" ||
	    fail_later "$mode in the cgroup: $(tail -3 "$out/err")"
	n=$(grep -c "aff=$last plan=$last\$" "$out/run")
	[ "$n" -eq 2 ] || fail_later "$mode: want 2 workers on cpu $last, got: $(cat "$out/run")"
	grep -q "cpus_allowed=$last cpus_allowed_by=\"cgroup cpuset\"" "$out/err" ||
	    fail_later "$mode: -v does not say the cgroup limited the plan: $(grep placement "$out/err")"
	[ $mode = numa ] || grep -q "local_rank=1 .* cpus=$last shared=yes" "$out/err" ||
	    fail_later "$mode: -v does not say the ranks share cpu $last"
done

