#!/bin/sh
# t_doc_paths.sh: every source path the documentation names exists.  The
# docs (README.md, tests/README.md, docs/*.md, man/*, bench/results/*.md)
# point readers at
# files such as rendezvous/engine/job.c; after a file moves, a stale path
# sends a newcomer nowhere.  Checked: words of the form
# {worker-lib,rendezvous,launcher,include,tests,bench,examples,docs,man}/...
# (a program may be named without its .c; names with * are patterns, skipped).
# And the map stays whole: docs/architecture.md names every .c file of the
# three layers in the room table of its own folder, and nothing else.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
cd "$TOP" || exit 2
n=0
files="README.md tests/README.md $(ls docs/*.md man/* bench/results/*.md 2>/dev/null)"
for f in $files; do
	for p in $(grep -oE '(^|[^A-Za-z0-9_./-])(worker-lib|rendezvous|launcher|include|tests|bench|examples|docs|man)/[A-Za-z0-9_./*-]*[A-Za-z0-9_/*]' "$f" |
		sed -E 's/^[^a-z]//' | sort -u); do
		case "$p" in *'*'*) continue ;; esac
		n=$((n + 1))
		# A program is named by its source: bench/rdzv_sim is bench/rdzv_sim.c.
		if [ ! -e "$p" ] && [ ! -e "$p.c" ]; then
			fail_later "$f names $p, which does not exist"
		fi
	done
done
# Every .c file of the three layers is named in docs/architecture.md's
# room table of its own folder, and every file a room table names exists
# in that folder.  A room row is "| `room/` | `a.c`, `b.c/.h` | what |"
# (or "| top | ..." for the layer's own folder) under "### `layer/`".
map=docs/architecture.md
listed=$(awk '
	/^### `[a-z-]+\/`/ { layer = $0; sub(/^### `/, "", layer); sub(/\/`.*/, "", layer); next }
	/^## / { layer = "" }
	layer != "" && /^\| (`[a-z_\/]+\/`|top) \|/ {
		n = split($0, cell, "|")
		room = cell[2]; gsub(/[ `]/, "", room)
		dir = room == "top" ? layer : layer "/" room; sub(/\/$/, "", dir)
		s = cell[3]
		while (match(s, /`[^`]+`/)) {
			f = substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH)
			if (f ~ /\.c\/\.h$/) { b = f; sub(/\.c\/\.h$/, "", b); print dir "/" b ".c"; print dir "/" b ".h" }
			else if (f ~ /^[a-z0-9_]+\.[ch]$/) print dir "/" f
		}
	}' "$map" | sort -u)
for f in $listed; do
	[ -e "$f" ] || fail_later "$map names $f, which does not exist"
done
for f in $(find worker-lib rendezvous launcher -name '*.c' | sort); do
	echo "$listed" | grep -qx "$f" ||
		fail_later "$f is in no room table of $map (its folder's row)"
done
no_failures && echo "doc paths ok: $n paths named, all exist; $(echo "$listed" | grep -c '\.c$') .c files in the room tables, each in its own folder's row"
