#!/bin/sh
# Install what building and testing cgrun needs on Debian 12, only what is
# missing.  As root it uses apt-get; otherwise it names the missing packages
# and exits 1.  Set CGRUN_DEPS_MINIMAL=1 to install only what the demo needs.
set -e
pkgs="gcc make libc6-dev pkg-config libevent-dev libhwloc-dev libjson-c-dev
libssl-dev libsystemd-dev libcurl4-openssl-dev python3 python3-torch procps"
if [ -z "$CGRUN_DEPS_MINIMAL" ]; then
	pkgs="$pkgs check mandoc iproute2 hwloc clang libclang-rt-14-dev valgrind
systemd debhelper dpkg-dev fakeroot psmisc util-linux ca-certificates
debian-archive-keyring strace g++ build-essential bsdutils tmux
slurmctld slurmd slurm-client munge etcd-server etcd-client
prometheus prometheus-node-exporter bash-completion python3-jsonschema"
fi
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "cgrun: missing Debian packages:$missing" >&2
	echo "cgrun: install them as root: apt-get install$missing" >&2
	exit 1
fi
echo "cgrun: installing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# An old or empty package list cannot find anything: refresh it first.
apt-get update -qq </dev/null >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing </dev/null >&2
