# tests/libcgrun/lib.sh: shell functions of the libcgrun surface tests
# (t_libcgrun_headers, t_libcgrun_headers_nccl), sourced by them.  They
# expect $top (source tree) and tests/lib.sh (T, fail_later).

# Whether include/cgrun/NAME compiles alone, twice in a row (include
# guards), as C99, C11, C++11 and C++17 with strict warnings.
header_alone() {	# NAME [EXTRA-CFLAGS]
	printf '#include <cgrun/%s>\n#include <cgrun/%s>\nint main(void) { return 0; }\n' "$1" "$1" >"$T/h.c"
	cp "$T/h.c" "$T/h.cc"
	for std in c99 c11; do
		# shellcheck disable=SC2086
		cc -std=$std -Wall -Wextra -Werror -pedantic -Wstrict-prototypes -Wmissing-prototypes \
		    -I"$top/include" $2 -c "$T/h.c" -o "$T/h.o" ||
			fail_later "$1 does not compile alone as $std"
	done
	for std in c++11 c++17; do
		# shellcheck disable=SC2086
		c++ -std=$std -Wall -Wextra -Werror -pedantic -I"$top/include" $2 -c "$T/h.cc" -o "$T/h.o" ||
			fail_later "$1 does not compile alone as $std"
	done
	echo "ok: $1 compiles alone (c99 c11 c++11 c++17)"
}

# A shared library's soname, and that it exports only cgrun_* symbols, each
# documented in man/libcgrun.3.
check_lib() {	# FILE SONAME
	[ -f "$1" ] || { fail_later "$1 not built"; return; }
	so=$(objdump -p "$1" | awk '$1 == "SONAME" { print $2 }')
	[ "$so" = "$2" ] || fail_later "$(basename "$1") soname '$so', want $2"
	syms=$(nm -D --defined-only "$1" | awk '{ print $3 }')
	bad=$(echo "$syms" | grep -v '^cgrun_' | grep -v '^$')
	[ -z "$bad" ] || fail_later "$(basename "$1") exports non-cgrun symbols:" $bad
	for s in $syms; do
		grep -Eq "^\.(Fn|Fo) $s( |\$)" "$top/man/libcgrun.3" ||
			fail_later "$s is not documented in man/libcgrun.3"
	done
	echo "ok: $(basename "$1"): soname $so, $(echo "$syms" | wc -l) cgrun_* symbols, all documented"
}
