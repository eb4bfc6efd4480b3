#!/bin/sh
# cgrun(1) names, for every option it shares with torchrun, the release
# that introduced it, and these claims hold against the real programs:
# - every option of torchrun 2.6's --help is in OPTIONS, tagged
#   ".Pq torchrun V" with V 1.13, 2.0 or 2.3;
# - "1.13" options are in Debian's torch 1.13 --help (underscore spelling),
#   later ones are not;
# - options tagged ".Pq after torchrun 2.6: ..." are rejected by
#   torchrun 2.6 ("unrecognized arguments") and accepted by cgrun;
# - --logs-specs: "default" works under both, a missing plugin fails under
#   both (cgrun: exit 2, one line naming the option).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
need_torch113
need_torch26
export USE_LIBUV=0 PYTHONPATH="$TOP/tests/libcgrun/libapi_nolibuv${PYTHONPATH:+:$PYTHONPATH}"

# The long options a --help defines (both spellings), one a line: from
# argparse's option lines ("  -r REDIRECTS, --redirects REDIRECTS  help").
helpopts() {
	grep -- '^  -' "$1" | sed 's/^  //; s/  .*//' |
		grep -oE -- '--[a-z][a-z_-]*' | sort -u
}
py26 -m torch.distributed.run --help >"$T/h26" 2>&1 || fail "torchrun 2.6 --help"
"$PY113" -m torch.distributed.run --help >"$T/h113" 2>&1 || fail "torchrun 1.13 --help"
helpopts "$T/h26" >"$T/o26"
helpopts "$T/h113" >"$T/o113"
grep -qx -- --nproc-per-node "$T/o26" && grep -qx -- --nproc_per_node "$T/o113" ||
	fail "cannot read the --help outputs: $(head -3 "$T/h26" "$T/h113")"

# "NAME TAG" for each option of the OPTIONS section (grouped .It share
# the tag that closes the group).
sed -n '/^\.Sh OPTIONS/,/^\.Sh ENVIRONMENT/p' "$TOP/man/cgrun.1" | awk '
	/^\.It / { if (!open) n = 0; open = 1
		line = $0; gsub(/\\-/, "-", line)
		while (match(line, /Fl -[a-z-]+/)) {
			names[n++] = substr(line, RSTART + 4, RLENGTH - 4)
			line = substr(line, RSTART + RLENGTH)
		}
		next }
	{ open = 0 }
	/^\.Pq (after )?torchrun / { tag = $0; sub(/^\.Pq /, "", tag)
		for (i = 0; i < n; i++) print names[i], tag; n = 0 }
' >"$T/tags"
[ "$(wc -l <"$T/tags")" -ge 25 ] || fail "too few tagged options: $(cat "$T/tags")"

# Every option torchrun 2.6 has is tagged as one of its own.
for o in $(grep -- - "$T/o26" | grep -v _ | grep -vx -- --help); do
	n=${o#--}
	tag=$(sed -n "s/^$n //p" "$T/tags")
	case "$tag" in "torchrun 1.13"|"torchrun 2.0"|"torchrun 2.3") ;;
	*) fail "--$n (torchrun 2.6) tagged '$tag' in cgrun(1)" ;; esac
done

# Tagged 2.6 options: in 2.6's help; in 1.13's exactly when tagged 1.13.
later=
while read -r n tag; do
	u=--$(echo "$n" | tr - _)
	case "$tag" in
	"torchrun 1.13"|"torchrun 2.0"|"torchrun 2.3")
		grep -qx -- "--$n" "$T/o26" || fail "--$n tagged '$tag', not in torchrun 2.6"
		if [ "$tag" = "torchrun 1.13" ]; then
			grep -qx -- "$u" "$T/o113" || fail "--$n tagged 1.13, not in torch 1.13's help"
		else
			grep -qx -e "$u" -e "--$n" "$T/o113" && fail "--$n tagged '$tag', but torch 1.13 has it"
		fi ;;
	"after torchrun 2.6: about "*)
		grep -qx -e "$u" -e "--$n" "$T/o26" && fail "--$n tagged '$tag', but torchrun 2.6 has it"
		later="$later --$n" ;;
	*) fail "--$n: unknown tag '$tag'" ;;
	esac
done <"$T/tags"
[ -n "$later" ] || fail "no option tagged as after torchrun 2.6"

# The later options: torchrun 2.6 rejects each, cgrun takes them all.
args=
for o in $later; do
	case $o in
	--virtual-local-rank) args="$args $o" ;;
	--numa-binding) args="$args $o=node" ;;
	--signals-to-handle) args="$args $o=SIGTERM" ;;
	--shutdown-timeout) args="$args $o=5" ;;
	--event-log-handler) args="$args $o=null" ;;
	*) args="$args $o=x" ;;
	esac
done
py26 -m torch.distributed.run --nproc-per-node=1 $args --no-python true >"$T/l26" 2>&1 &&
	fail "torchrun 2.6 accepted$args"
for o in $later; do
	grep "unrecognized arguments:" "$T/l26" | grep -q -- " $o" ||
		fail "torchrun 2.6 did not reject $o: $(tail -n 2 "$T/l26")"
done
"$CGRUN" --dry-run $(echo "$args" | sed 's/--numa-binding=node//') true >"$T/lc" 2>&1 ||
	fail "cgrun refused$args: $(cat "$T/lc")"

# --logs-specs: default works, a missing plugin fails, under both.
py26 -m torch.distributed.run --standalone --nproc-per-node=1 --logs-specs=default \
    --no-python true >"$T/ls26" 2>&1 || fail "torchrun 2.6 --logs-specs=default: $(tail -n 3 "$T/ls26")"
timeout 20 "$CGRUN" --standalone --nproc-per-node=1 --logs-specs=default --no-python true \
    >"$T/lsc" 2>&1 || fail "cgrun --logs-specs=default: $(cat "$T/lsc")"
py26 -m torch.distributed.run --standalone --nproc-per-node=1 --logs-specs=nosuch \
    --no-python true >"$T/ls26" 2>&1 && fail "torchrun 2.6 accepted --logs-specs=nosuch"
grep -q "torchrun.logs_specs\[nosuch\]" "$T/ls26" || fail "torchrun 2.6: $(tail -n 2 "$T/ls26")"
rm -f "$T/ran"
"$CGRUN" --standalone --nproc-per-node=1 --logs-specs=nosuch --no-python \
    sh -c ": >$T/ran" >"$T/lsc" 2>"$T/lse"
rc=$?
[ $rc -eq 2 ] || fail "cgrun --logs-specs=nosuch: exit $rc, want 2"
[ -e "$T/ran" ] && fail "cgrun --logs-specs=nosuch ran a worker"
[ "$(head -n 1 "$T/lse")" = 'cgrun: --logs-specs: no logs specs "nosuch": cgrun has only "default" and cannot load torchrun.logs_specs Python plugins' ] ||
	fail "cgrun --logs-specs=nosuch said: $(cat "$T/lse")"
echo "ok: $(wc -l <"$T/tags") options tagged; 1.13/2.6 help agree; later options$later rejected by torchrun 2.6; --logs-specs as torchrun"
