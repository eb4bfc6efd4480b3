#!/bin/sh
# torch26.sh [PYTHON-ARGS...]: run Debian trixie's python3.13 with torch 2.6
# (gloo included, CPU only) without touching the system's packages.
# torch26.sh --ensure: only make sure it is there; on failure print why on
# the last line and exit 1.
#
# The first call downloads python3-torch and its dependency closure (~210 MB)
# with apt-get under a private configuration (its own sources list, lists,
# cache and an empty dpkg status), from the Debian mirror the system's apt
# already uses (or $CGRUN_TORCH26_MIRROR), and unpacks the .debs with
# dpkg -x into ${CGRUN_TORCH26_DIR:-$HOME/.cache/cgrun-torch26}.  The
# interpreter then runs under trixie's own dynamic loader, so trixie's newer
# glibc and libstdc++ apply to it alone.
#
# Debian builds torch 2.6 without libuv, while torch 2.6 creates every
# TCPStore with use_libuv=True by default: USE_LIBUV=0 is exported (read by
# init_process_group's env:// rendezvous); scripts creating a TCPStore
# themselves pass use_libuv=False.
set -e
R=${CGRUN_TORCH26_DIR:-$HOME/.cache/cgrun-torch26}
PY=$R/root/usr/bin/python3.13

# Print the Debian mirror URI of the system's apt sources.
mirror() {
	if [ -n "$CGRUN_TORCH26_MIRROR" ]; then echo "$CGRUN_TORCH26_MIRROR"; return; fi
	u=$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[ -n "$u" ] || u=$(sed -n 's/^deb  *\(\[[^]]*\]  *\)\{0,1\}\(http[^ ]*\/debian\) .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n 1)
	[ -n "$u" ] || u=http://deb.debian.org/debian
	echo "$u"
}

# Download and unpack into a temporary tree, then move it into place.
install_torch26() {
	command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
		{ echo "torch26: apt-get and dpkg are needed to fetch torch 2.6"; return 1; }
	key=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -f "$key" ] || { echo "torch26: $key missing (package debian-archive-keyring)"; return 1; }
	mkdir -p "$(dirname "$R")"
	T=$(mktemp -d "$R.tmp.XXXXXX")
	A=$T/apt
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/state" "$T/root"
	: > "$A/state/status"
	echo "deb [signed-by=$key] $(mirror) trixie main" > "$A/sources.list"
	O="-o Dir::Etc::SourceList=$A/sources.list -o Dir::Etc::SourceParts=/dev/null
	   -o Dir::State::Lists=$A/lists -o Dir::Cache=$A/cache
	   -o Dir::State::status=$A/state/status -o APT::Architecture=amd64
	   -o APT::Install-Recommends=false -o Debug::NoLocking=1
	   -o Acquire::Retries=3 -o APT::Sandbox::User=root"
	echo "torch26: downloading torch 2.6 from Debian trixie into $R (once)" >&2
	# shellcheck disable=SC2086
	if ! apt-get $O -qq update </dev/null >"$T/log" 2>&1 ||
	   ! apt-get $O -qq install --download-only -y python3-torch python3.13 </dev/null >>"$T/log" 2>&1; then
		tail -n 5 "$T/log" >&2
		rm -rf "$T"
		echo "torch26: cannot download Debian trixie's python3-torch (no network or mirror?)"
		return 1
	fi
	for f in "$A"/cache/archives/*.deb; do dpkg -x "$f" "$T/root"; done
	rm -rf "$A"
	[ -x "$T/root/usr/bin/python3.13" ] || { rm -rf "$T"; echo "torch26: python3.13 missing after unpacking"; return 1; }
	rm -rf "$R" && mv "$T" "$R"
}

# Serialise concurrent first calls.
if [ ! -x "$PY" ]; then
	mkdir -p "$(dirname "$R")"
	exec 9>"$R.lock"
	flock -w 1200 9 || { echo "torch26: timed out waiting for another download (lock $R.lock)"; exit 1; }
	[ -x "$PY" ] || install_torch26 || exit 1
	exec 9>&-
fi
L=$R/root/usr/lib/x86_64-linux-gnu
export PYTHONHOME="$R/root/usr"
export PYTHONPATH="$R/root/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}"
export USE_LIBUV=0
set -- "$R/root/usr/lib64/ld-linux-x86-64.so.2" --library-path \
	"$R/root/usr/lib:$L:$L/blas:$L/lapack:$L/openmpi/lib" "$PY" -s "$@"
if [ "${6:-}" != --ensure ]; then
	exec "$@"
fi
out=$("$1" "$2" "$3" "$4" "$5" -c 'import torch; print(torch.__version__)' 2>&1) || true
case "$out" in 2.6*) exit 0 ;; esac
echo "$out" | tail -n 3
echo "torch26: torch 2.6 in $R does not import"
exit 1
