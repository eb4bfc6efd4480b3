#!/bin/sh
# Every man page under man/ is clean for `mandoc -Tlint` (mdoc, no
# warnings), and the three pages the project promises exist.
top=${CGRUN_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v mandoc >/dev/null 2>&1 || {
	echo "mandoc not installed (Debian package mandoc)"; exit 77; }
fail=0 n=0
for p in cgrun.1 cgrun-rdzvd.8 libcgrun.3; do
	[ -f "$top/man/$p" ] || { echo "FAIL: man/$p is missing"; fail=1; }
done
for m in "$top"/man/*.[1-9]; do
	[ -f "$m" ] || continue
	n=$((n + 1))
	# Every message counts, style included, except "referenced manual not
	# found": that one depends on which pages this machine has installed.
	out=$(mandoc -Tlint "$m" 2>&1 | grep -v -e 'STYLE: referenced manual not found' -e 'outdated mandoc.db')
	if [ -n "$out" ]; then
		echo "FAIL: mandoc -Tlint $(basename "$m"):"
		echo "$out" | head -n 30
		fail=1
	else
		echo "ok: $(basename "$m") lint-clean"
	fi
	grep -q '^\.Dd' "$m" || { echo "FAIL: $(basename "$m") is not mdoc"; fail=1; }
done
echo "$n pages checked"
exit $fail
