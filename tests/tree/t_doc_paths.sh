#!/bin/sh
# t_doc_paths.sh: every source path the documentation names exists.  The
# docs (README.md, docs/*.md, man/*, bench/results/*.md) point readers at
# files such as rendezvous/engine/job.c; after a file moves, a stale path
# sends a newcomer nowhere.  Checked: words of the form
# {worker-lib,rendezvous,launcher,include,tests,bench,examples,docs,man}/...
# (a program may be named without its .c; names with * are patterns, skipped).
cd "${CGRUN_TOP:-$(dirname "$0")/../..}" || exit 2
fail=0 n=0
files="README.md $(ls docs/*.md man/* bench/results/*.md 2>/dev/null)"
for f in $files; do
	for p in $(grep -oE '(^|[^A-Za-z0-9_./-])(worker-lib|rendezvous|launcher|include|tests|bench|examples|docs|man)/[A-Za-z0-9_./*-]*[A-Za-z0-9_/*]' "$f" |
		sed -E 's/^[^a-z]//' | sort -u); do
		case "$p" in *'*'*) continue ;; esac
		n=$((n + 1))
		# A program is named by its source: bench/rdzv_sim is bench/rdzv_sim.c.
		if [ ! -e "$p" ] && [ ! -e "$p.c" ]; then
			echo "FAIL: $f names $p, which does not exist"
			fail=1
		fi
	done
done
[ "$fail" -eq 0 ] && echo "doc paths ok: $n paths named, all exist"
exit $fail
