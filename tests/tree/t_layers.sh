#!/bin/sh
# t_layers.sh: the layers point one way (include/ <- worker-lib/ <-
# rendezvous/ <- launcher/), checked from the sources:
#  - no file includes a header that lives only in a higher layer;
#  - no two modules include each other's header (a.c uses b.h and b.c uses
#    a.h), inside a layer or across;
#  - no two headers share a base name (every layer folder is on the include
#    path of the layers above, so a second "log.h" would shadow the first).
# The Makefile enforces the first rule at build time as well.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$TOP" || exit 2
layers="worker-lib rendezvous launcher"

# The layer (0, 1, 2) that holds header $1 (a base name), or nothing.
header_layer() {
	i=0
	for l in $layers; do
		[ -n "$(find "$l" -name "$1" -print -quit)" ] && { echo $i; return; }
		i=$((i + 1))
	done
}

# Quoted includes of a file, one base name a line; the public headers
# ("cgrun/...", include/) are everyone's and left out.
includes() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1" |
		grep -v '^cgrun/' | sed 's|.*/||'
}

dups=$(find include worker-lib rendezvous launcher -name '*.h' ! -path 'include/*' \
	-printf '%f\n' | sort | uniq -d)
if [ -n "$dups" ]; then
	fail_later "header base names used twice: $dups"
	find worker-lib rendezvous launcher -name '*.h' | grep -F "$(echo "$dups" | sed 's|^|/|')"
fi

i=0
for l in $layers; do
	for f in $(find "$l" -name '*.[ch]'); do
		for h in $(includes "$f"); do
			hl=$(header_layer "$h")
			[ -n "$hl" ] || continue
			if [ "$hl" -gt "$i" ]; then
				fail_later "$f includes $h, a header of a higher layer"
			fi
		done
	done
	i=$((i + 1))
done

# Module edges "a b": a.c or a.h includes b.h (a != b).
edges=$T/edges
for f in $(find worker-lib rendezvous launcher -name '*.[ch]'); do
	m=$(basename "$f"); m=${m%.*}
	for h in $(includes "$f"); do
		[ "${h%.h}" = "$m" ] || echo "$m ${h%.h}"
	done
done | sort -u >"$edges"
while read -r a b; do
	if grep -qx "$b $a" "$edges" && [ "$a" \< "$b" ]; then
		fail_later "$a and $b include each other's header"
	fi
done <"$edges"
n=$(wc -l <"$edges")
no_failures && echo "layers ok: $n include edges, none upward, none mutual"
