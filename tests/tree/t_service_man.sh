#!/bin/sh
# Every man page under man/ is clean for `mandoc -Tlint` (mdoc, no
# warnings), and the three pages the project promises exist.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
command -v mandoc >/dev/null 2>&1 || {
	skip "mandoc not installed (Debian package mandoc)"; }
n=0
for p in cgrun.1 cgrun-rdzvd.8 libcgrun.3; do
	[ -f "$top/man/$p" ] || fail_later "man/$p is missing"
done
for m in "$top"/man/*.[1-9]; do
	[ -f "$m" ] || continue
	n=$((n + 1))
	# Every message counts, style included, except "referenced manual not
	# found": that one depends on which pages this machine has installed.
	out=$(mandoc -Tlint "$m" 2>&1 | grep -v -e 'STYLE: referenced manual not found' -e 'outdated mandoc.db')
	if [ -n "$out" ]; then
		fail_later "mandoc -Tlint $(basename "$m"):"
		echo "$out" | head -n 30
	else
		echo "ok: $(basename "$m") lint-clean"
	fi
	grep -q '^\.Dd' "$m" || fail_later "$(basename "$m") is not mdoc"
done
echo "$n pages checked"
