# A real Slurm cluster (Debian 12's slurmctld, slurmd and munged, Slurm
# 22.05) on this one machine, for the black-box tests
# tests/slurm/t_slurm_cluster_*.sh.  Sourced after tests/lib.sh; a test
# does:
#
#	. "$TOP/tests/slurm/cluster.sh"
#	slurm_need              # or exit 77 with the reason on the last line
#	slurm_start 3           # nodes n1..n3; SLURM_CONF exported
#				# (slurm_start 3 9: nodes n9..n11)
#	jobid=$(sbatch --parsable -N3 job.sh)
#	slurm_wait_job "$jobid" 90
#
# and slurm_stop, registered by slurm_start with at_exit, stops everything
# again.
#
# Layout: one network namespace per host ("ctl" for slurmctld, n1..nN for
# the slurmds), each with its own veth on a bridge of the harness's own
# (cgsbrK, subnet 10.97.K.0/24, K the first free number), loopback up and no
# route out of the subnet.  Every daemon also runs in its own UTS and mount
# namespace: its hostname is its node name and $SL_DIR/hosts is bind-mounted
# over /etc/hosts there (the caller's /etc/hosts is untouched).  This shell
# reaches the cluster through the bridge's address 10.97.K.254, so sbatch,
# squeue and scancel work from here.  munged runs here; its socket and key
# are in $SL_DIR ($T/slurm), which is also where all state, spool and logs
live.  The
# file system is shared, so the nodes run the build under test and write
# their results where the test reads them.
#
# slurm_stop (at exit) cancels the jobs, stops the daemons by the pids in
# their pid files, kills what is left in the node namespaces and deletes the
# namespaces, the veths and the bridge: nothing stays behind.

SL_PKGS="slurmctld slurmd slurm-client munge"
SL_DIR='' SL_K='' SL_NET='' SL_NODES=0 SL_FIRST=1 SL_GPUS=0

# slurm_skip REASON: exit 77 with REASON on the last line.
slurm_skip() {
	skip "$1"
}

# slurm_fail MSG: fail the test: the end of every daemon's log (without
# the noise of the absent PMIx plugin), then MSG as the last line.
slurm_fail() {
	if [ -n "$SL_DIR" ]; then
		for f in "$SL_DIR"/log/*.log; do
			[ -f "$f" ] || continue
			echo "== $(basename "$f") (last lines):"
			grep -v -i -e pmix -e 'Unauthorized credential' -e 'Replayed credential' "$f" | tail -n 6
		done
	fi
	fail "$1"
}

# slurm_need: skip unless a cluster can run here (root, a cgroup file
# system, network namespaces, the Slurm packages, installed if missing).
slurm_need() {
	[ "$(id -u)" = 0 ] || slurm_skip "needs root (network namespaces, slurmd)"
	grep -q ' /sys/fs/cgroup' /proc/mounts ||
		slurm_skip "no cgroup file system at /sys/fs/cgroup (slurmd 22.05 needs one)"
	for b in ip nsenter unshare; do
		command -v $b >/dev/null || slurm_skip "no $b (apt-get install iproute2 util-linux)"
	done
	ip netns list >/dev/null 2>&1 || slurm_skip "ip netns does not work here"
	slurm_have_pkgs && return 0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$SL_PKGS </dev/null >/dev/null 2>&1 ||
		{ apt-get update -qq </dev/null >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $SL_PKGS </dev/null >/dev/null 2>&1; }
	slurm_have_pkgs || slurm_skip "Debian packages $SL_PKGS not installed and not installable"
}

# slurm_have_pkgs: the daemons and clients are on PATH.
slurm_have_pkgs() {
	for b in slurmctld slurmd munged sbatch srun squeue scancel sinfo; do
		PATH=$PATH:/usr/sbin command -v $b >/dev/null || return 1
	done
}

# slurm_ns HOST: the network namespace of HOST (ctl, n1, ...).
slurm_ns() {
	echo "cgsl$SL_K-$1"
}

# slurm_on HOST CMD...: run CMD in HOST's namespaces (network joined; UTS
# and mount new, with the hostname set and our hosts file mounted).
slurm_on() {
	h=$1
	shift
	nsenter --net="/run/netns/$(slurm_ns "$h")" unshare --uts --mount \
		--propagation private sh -c \
		'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"' \
		sh "$h" "$SL_DIR/hosts" "$@"
}

# slurm_bridge: create a bridge cgsbrK with the first free K whose subnet
# nothing here routes yet; sets SL_K and SL_NET.
slurm_bridge() {
	for k in $(seq 1 250); do
		ip route show 2>/dev/null | grep -q "^10\.97\.$k\." && continue
		ip link add "cgsbr$k" type bridge 2>/dev/null || continue
		SL_K=$k SL_NET=10.97.$k
		echo "$k" >"$SL_DIR/bridge"
		ip addr add "$SL_NET.254/24" dev "cgsbr$k" &&
			ip link set "cgsbr$k" up && return 0
		return 1
	done
	return 1
}

# slurm_host HOST ADDR: a namespace for HOST, a veth pair from it to the
# bridge, the address ADDR/24 on it, loopback up.
slurm_host() {
	ns=$(slurm_ns "$1")
	ip netns add "$ns" || return 1
	echo "$ns" >>"$SL_DIR/namespaces"
	ip link add "cgs$SL_K$1" type veth peer name eth0 netns "$ns" &&
		ip link set "cgs$SL_K$1" master "cgsbr$SL_K" up &&
		ip -n "$ns" addr add "$2/24" dev eth0 &&
		ip -n "$ns" link set eth0 up &&
		ip -n "$ns" link set lo up
}

# slurm_munge: a munged of our own, socket and key in $SL_DIR/munge.
slurm_munge() {
	m=$SL_DIR/munge
	mkdir -p "$m" && chmod 755 "$m"
	(umask 077 && head -c 1024 /dev/urandom >"$m/munge.key")
	munged --force --socket="$m/munge.socket" --key-file="$m/munge.key" \
		--pid-file="$SL_DIR/run/munged.pid" --log-file="$SL_DIR/log/munged.log" \
		--seed-file="$m/munged.seed"
}

# slurm_gpus K: call before slurm_start: every node then has K fake GPUs
# (GresTypes=gpu, Gres=gpu:K; gres.conf names K character devices of
# NVIDIA's major number made in $SL_DIR/dev, nvidia0..), as many CPUs as
# this machine really has, and task/affinity binds each task to its CPUs,
# so that `srun --gres=gpu:N` sets CUDA_VISIBLE_DEVICES and a CPU mask in
# the step as on a real GPU cluster.  Nothing opens the devices: the
# workers see the GPUs through the fake NVML (slurm_fake_nvml).
slurm_gpus() {
	SL_GPUS=$1
}

# slurm_fake_nvml: export what makes cgrun (and the jobs, which inherit
# this environment) see the nodes' fake GPUs: the fake NVML built with the
# tests, describing $SL_GPUS GPUs in PCI order (UUIDs GPU-slurm-0..).
slurm_fake_nvml() {
	CGRUN_NVML_LIBRARY=$CGRUN_BUILD/tests/place/fake_nvml/libnvidia-ml.so.1
	[ -f "$CGRUN_NVML_LIBRARY" ] || slurm_fail "fake NVML not built: $CGRUN_NVML_LIBRARY"
	FAKE_NVML_GPUS=
	for g in $(seq 0 $((SL_GPUS - 1))); do
		FAKE_NVML_GPUS="$FAKE_NVML_GPUS${FAKE_NVML_GPUS:+;}00000000:$((g + 16)):00.0,GPU-slurm-$g,8.0,6912"
	done
	export CGRUN_NVML_LIBRARY FAKE_NVML_GPUS
	unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER HWLOC_XMLFILE
}

# slurm_task_plugin: task/affinity with fake GPUs, else task/none.
slurm_task_plugin() {
	if [ "$SL_GPUS" -gt 0 ]; then echo task/affinity; else echo task/none; fi
}

# slurm_node_res: a node's CPUs (and GPUs) in slurm.conf.
slurm_node_res() {
	if [ "$SL_GPUS" -gt 0 ]; then
		echo "CPUs=$(getconf _NPROCESSORS_ONLN) Gres=gpu:$SL_GPUS"
	else
		echo "CPUs=4"
	fi
}

# slurm_gpu_devices: with fake GPUs, the character devices gres.conf names
# (slurmd refuses regular files); skip if they cannot be made.
slurm_gpu_devices() {
	[ "$SL_GPUS" -gt 0 ] || return 0
	mkdir -p "$SL_DIR/dev"
	for g in $(seq 0 $((SL_GPUS - 1))); do
		mknod "$SL_DIR/dev/nvidia$g" c 195 "$g" 2>/dev/null ||
			slurm_skip "cannot mknod the fake GPUs' device files (no CAP_MKNOD?)"
	done
}

# slurm_gres_conf: with fake GPUs, GresTypes=gpu for slurm.conf and
# $SL_DIR/gres.conf (read from slurm.conf's directory).
slurm_gres_conf() {
	[ "$SL_GPUS" -gt 0 ] || return 0
	echo "AutoDetect=off" >"$SL_DIR/gres.conf"
	echo "Name=gpu File=$SL_DIR/dev/nvidia[0-$((SL_GPUS - 1))]" >>"$SL_DIR/gres.conf"
	echo "GresTypes=gpu"
}

# slurm_conf: write $SL_DIR/slurm.conf and $SL_DIR/hosts (slurm_nums).
slurm_conf() {
	printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n%s ctl\n%s login\n' \
		"$SL_NET.253" "$SL_NET.254" >"$SL_DIR/hosts"
	{
		cat <<-EOF
		ClusterName=cgrun$SL_K
		SlurmctldHost=ctl($SL_NET.253)
		SlurmUser=root
		SlurmdUser=root
		AuthType=auth/munge
		AuthInfo=socket=$SL_DIR/munge/munge.socket
		CredType=cred/munge
		StateSaveLocation=$SL_DIR/state
		SlurmdSpoolDir=$SL_DIR/spool/%n
		SlurmctldPidFile=$SL_DIR/run/slurmctld.pid
		SlurmdPidFile=$SL_DIR/run/slurmd-%n.pid
		SlurmctldLogFile=$SL_DIR/log/slurmctld.log
		SlurmdLogFile=$SL_DIR/log/slurmd-%n.log
		ProctrackType=proctrack/linuxproc
		TaskPlugin=$(slurm_task_plugin)
		JobAcctGatherType=jobacct_gather/none
		AccountingStorageType=accounting_storage/none
		SelectType=select/cons_tres
		SelectTypeParameters=CR_CPU
		SlurmdParameters=config_overrides
		ReturnToService=2
		MpiDefault=none
		MailProg=/bin/true
		KillWait=30
		MinJobAge=600
		EOF
		slurm_gres_conf
		for i in $(slurm_nums); do
			echo "NodeName=n$i NodeAddr=$SL_NET.$i $(slurm_node_res) RealMemory=1024"
			echo "$SL_NET.$i n$i" >>"$SL_DIR/hosts"
			mkdir -p "$SL_DIR/spool/n$i"
		done
		echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
	} >"$SL_DIR/slurm.conf"
}

# slurm_nums: the numbers of the nodes, one a line (1..N by default).
slurm_nums() {
	seq "$SL_FIRST" $((SL_FIRST + SL_NODES - 1))
}

# slurm_start N [FIRST]: start slurmctld and N slurmds (nFIRST.., FIRST 1
# by default, in this order in slurm.conf), wait until every node is idle;
# exports SLURM_CONF and registers slurm_stop to run at exit.
slurm_start() {
	SL_NODES=$1 SL_FIRST=${2:-1}
	export PATH="$PATH:/usr/sbin:/sbin"
	# CGRUN_SLURM_KEEP=1 keeps the state and logs: outside T then.
	if [ "${CGRUN_SLURM_KEEP:-0}" = 1 ]; then
		SL_DIR=$(mktemp -d /tmp/cgrun-slurm.XXXXXX) || fail "mktemp in /tmp"
	else
		SL_DIR=$(tmpdir slurm)
	fi
	chmod 755 "$SL_DIR"
	at_exit slurm_stop
	mkdir -p "$SL_DIR/state" "$SL_DIR/log" "$SL_DIR/run" "$SL_DIR/spool"
	slurm_bridge || slurm_fail "no free bridge cgsbr1..cgsbr250"
	slurm_host ctl "$SL_NET.253" || slurm_fail "cannot set up namespace ctl"
	for i in $(slurm_nums); do
		slurm_host "n$i" "$SL_NET.$i" || slurm_fail "cannot set up namespace n$i"
	done
	slurm_gpu_devices
	slurm_conf
	export SLURM_CONF="$SL_DIR/slurm.conf"
	slurm_munge || slurm_fail "munged did not start"
	slurm_on ctl slurmctld -f "$SLURM_CONF" || slurm_fail "slurmctld did not start"
	for i in $(slurm_nums); do
		slurm_on "n$i" slurmd -N "n$i" -f "$SLURM_CONF" || slurm_fail "slurmd n$i did not start"
	done
	i=0
	until [ "$(sinfo -h -t idle -o %D 2>/dev/null)" = "$SL_NODES" ]; do
		[ $i -ge 300 ] && slurm_fail "$SL_NODES nodes not idle after 30 s: $(sinfo 2>&1)"
		sleep 0.1
		i=$((i + 1))
	done
	l=$((SL_FIRST + SL_NODES - 1))
	echo "slurm: $SL_NODES nodes up in $SL_DIR (n$SL_FIRST..n$l = $SL_NET.$SL_FIRST..$l, ctl $SL_NET.253)"
}

# slurm_daemons: the pids in the daemons' pid files that still run one.
slurm_daemons() {
	for f in "$SL_DIR"/run/*.pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		case $(ps -o comm= -p "$p" 2>/dev/null) in slurm* | munged) echo "$p" ;; esac
	done
}

# slurm_leftovers: every process in a node namespace but the slurmds, one
# "HOST PID ARGS" line each (nothing: the nodes are clean).
slurm_leftovers() {
	d=" $(slurm_daemons | tr '\n' ' ') "
	for i in $(slurm_nums); do
		for p in $(ip netns pids "$(slurm_ns "n$i")" 2>/dev/null); do
			case $d in *" $p "*) continue ;; esac
			a=$(ps -o args= -p "$p" 2>/dev/null) || continue
			echo "n$i $p $a"
		done
	done
}

# slurm_wait_job JOBID SECS: wait until the job left the queue; after SECS
# cancel it and fail, showing what the job wrote.
slurm_wait_job() {
	end=$(($(date +%s) + $2))
	while squeue -h -j "$1" -o %i 2>/dev/null | grep -q .; do
		if [ "$(date +%s)" -ge $end ]; then
			echo "job $1 still running after $2 s; its steps:"
			squeue -s -j "$1" 2>&1
			scancel "$1"
			slurm_fail "job $1 did not end within $2 s"
		fi
		sleep 0.2
	done
}

# slurm_submit NODES SCRIPT: sbatch SCRIPT on NODES nodes, its output in
# SCRIPT.out; sets SL_JOB (the job id) and SL_T0 (when).
slurm_submit() {
	SL_T0=$(date +%s)
	SL_JOB=$(sbatch --parsable -N"$1" -o "$2.out" "$2") || slurm_fail "sbatch refused $2"
}

# slurm_run NODES SECS SCRIPT: submit SCRIPT and wait (SECS at most) until
# the job ended; says how long it took.
slurm_run() {
	slurm_submit "$1" "$3"
	slurm_wait_job "$SL_JOB" "$2"
	echo "job $SL_JOB took $(($(date +%s) - SL_T0)) s"
}

# slurm_step_ok WHAT RCFILE OUTFILE: the step's exit status (in RCFILE) is 0;
# else fail with the end of its output.
slurm_step_ok() {
	[ "$(cat "$2" 2>/dev/null)" = 0 ] && return 0
	tail -n 30 "$3"
	slurm_fail "$1 exited $(cat "$2" 2>/dev/null)"
}

# slurm_wait_files GLOB N SECS WHAT: wait until N files match GLOB.
slurm_wait_files() {
	end=$(($(date +%s) + $3))
	while [ "$(ls $1 2>/dev/null | wc -l)" -lt "$2" ]; do
		[ "$(date +%s)" -ge $end ] &&
			slurm_fail "$4: $(ls $1 2>/dev/null | wc -l)/$2 after $3 s"
		sleep 0.1
	done
}

# slurm_stop: cancel the jobs, stop the daemons, kill what is left in the
# namespaces, delete namespaces, veths and bridge and the state directory.
slurm_stop() {
	[ -n "$SL_DIR" ] && [ -d "$SL_DIR" ] || return 0
	if [ -S "$SL_DIR/munge/munge.socket" ]; then
		jobs=$(squeue -h -o %i 2>/dev/null)
		[ -n "$jobs" ] && scancel $jobs 2>/dev/null
	fi
	slurm_kill $(slurm_daemons)
	if [ -f "$SL_DIR/namespaces" ]; then
		for ns in $(cat "$SL_DIR/namespaces"); do
			slurm_kill $(ip netns pids "$ns" 2>/dev/null)
			ip link del "cgs$SL_K${ns##*-}" 2>/dev/null
			ip netns del "$ns" 2>/dev/null
		done
	fi
	[ -f "$SL_DIR/bridge" ] && ip link del "cgsbr$(cat "$SL_DIR/bridge")" 2>/dev/null
	if [ "${CGRUN_SLURM_KEEP:-0}" = 1 ]; then
		echo "slurm: state and logs kept in $SL_DIR"
	else
		rm -rf "$SL_DIR"
	fi
}

# slurm_kill PID...: TERM them, KILL what is still there after 5 s.
slurm_kill() {
	[ $# -gt 0 ] || return 0
	kill "$@" 2>/dev/null
	i=0
	while [ $i -lt 50 ]; do
		left=
		for p in "$@"; do
			case $(ps -o stat= -p "$p" 2>/dev/null) in '' | Z*) ;; *) left="$left $p" ;; esac
		done
		[ -z "$left" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 $left 2>/dev/null
}
