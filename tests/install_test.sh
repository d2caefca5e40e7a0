#!/usr/bin/env bash
# Install test: cmake --install into a temporary prefix, then build a program
# against the installed library through pkg-config (shared and static) and run
# it; then the README's C example (examples/dpsgd_epsilon.c) the same way.
# Usage: install_test.sh <path-to-dpacct-binary> <source-dir>
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
build="$(cd "$(dirname "$1")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if eval "$2"; then echo "ok - $1"; pass=$((pass + 1)); else echo "not ok - $1"; fail=$((fail + 1)); fi; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null 2>&1
check "install puts the header, libraries, binary and pkg-config file in place" \
  '[ -f "$tmp/prefix/include/dpacct/dpacct.h" ] && [ -x "$tmp/prefix/bin/dpacct" ] && ls "$tmp"/prefix/lib*/pkgconfig/dpacct.pc >/dev/null 2>&1'
pcdir="$(dirname "$(ls "$tmp"/prefix/lib*/pkgconfig/dpacct.pc | head -1)")"
cat > "$tmp/use.c" <<'C'
#include <stdio.h>
#include <dpacct/dpacct.h>
int main(void)
{
    dpa_error err;
    dpa_spec *spec = dpa_spec_from_json("{\"gaussian\": {\"sigma\": 1}}", &err);
    dpa_accountant *a = spec ? dpa_accountant_new(spec, NULL, &err) : NULL;
    dpa_result r;
    int ok = a && dpa_accountant_epsilon(a, 1e-5, &r, &err) == DPA_OK;
    if (ok) printf("%.17g %.17g\n", r.lower, r.upper);
    dpa_accountant_free(a);
    dpa_spec_free(spec);
    return ok ? 0 : 1;
}
C
flags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs dpacct)"
libdir="$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir dpacct)"
check "pkg-config resolves dpacct from the installed prefix" '[ -n "$flags" ]'
check "a program links against the shared library" \
  'cc "$tmp/use.c" $flags -Wl,-rpath,"$libdir" -o "$tmp/use_shared" 2>/dev/null'
out="$("$tmp/use_shared" 2>/dev/null)"
check "and brackets eps = 4.37717809568122 for sigma = 1 at delta 1e-5" \
  'awk -v lo="${out% *}" -v hi="${out#* }" "BEGIN { exit !(lo + 0 <= 4.37717809568122 && 4.37717809568122 <= hi + 0) }"'
sflags="$(PKG_CONFIG_PATH="$pcdir" pkg-config --static --cflags --libs dpacct | sed 's/-ldpacct/-l:libdpacct.a/')"
check "a program links against the static library (pkg-config --static)" \
  'cc "$tmp/use.c" $sflags -o "$tmp/use_static" 2>/dev/null && "$tmp/use_static" >/dev/null'

# The C example of the README (examples/dpsgd_epsilon.c) against the installed
# library, built as the README says: pkg-config flags and an rpath to the
# prefix's libdir (without it the loader would need LD_LIBRARY_PATH).
src="${2:-$(cd "$(dirname "$0")/.." && pwd)}"
check "examples/dpsgd_epsilon.c compiles against the install without warnings (-Wall -Wextra -pedantic -std=c11)" \
  'cc -std=c11 -Wall -Wextra -pedantic -Werror "$src/examples/dpsgd_epsilon.c" $flags -Wl,-rpath,"$libdir" -o "$tmp/dpsgd_epsilon"'
"$tmp/dpsgd_epsilon" >"$tmp/ex.out" 2>&1; ex_rc=$?
"$tmp/prefix/bin/dpacct" epsilon --delta 1e-5 --json "$src/examples/dpsgd.json" >"$tmp/cli.json" 2>/dev/null
check "and prints the DP-SGD bounds of dpacct (examples/dpsgd.json), upper rounded up, lower rounded down" \
  '[ "$ex_rc" -eq 0 ] && python3 - "$tmp/ex.out" "$tmp/cli.json" <<"PY"
import json, re, sys
from fractions import Fraction as F
t, d = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
up = re.search(r"^epsilon <= (\S+) \(certified upper bound, rounded up\)$", t, re.M).group(1)
lo = re.search(r"^epsilon >= (\S+) \(lower bound, rounded down\)$", t, re.M).group(1)
# exact decimals against the exact doubles: outside, and within 6 significant digits
U, L = F(d["epsilon_upper"]), F(d["epsilon_lower"])
ok = F(up) >= U and F(lo) <= L and F(up) - U <= U / 10**5 and L - F(lo) <= L / 10**5
ok = ok and "at delta = 1e-05, method pld, accuracy met" in t
sys.exit(0 if ok else 1)
PY'
first="$(head -1 "$tmp/ex.out")"
check "the example also links without an rpath (run with LD_LIBRARY_PATH) and statically, same output" \
  'cc -std=c11 "$src/examples/dpsgd_epsilon.c" $flags -o "$tmp/ex_norpath" &&
   [ "$(LD_LIBRARY_PATH="$libdir" "$tmp/ex_norpath" | head -1)" = "$first" ] &&
   cc -std=c11 "$src/examples/dpsgd_epsilon.c" $sflags -o "$tmp/ex_static" &&
   [ "$("$tmp/ex_static" | head -1)" = "$first" ]'
"$tmp/dpsgd_epsilon" 0 >"$tmp/ex.out" 2>&1; ex_rc=$?
check "and reports a refused spec (sigma 0) on stderr with exit status 1" \
  '[ "$ex_rc" -eq 1 ] && grep -q "^dpsgd_epsilon: .*sigma" "$tmp/ex.out"'
check "README.md shows examples/dpsgd_epsilon.c verbatim" \
  'python3 - "$src/README.md" "$src/examples/dpsgd_epsilon.c" <<"PY"
import sys
readme, code = open(sys.argv[1]).read(), open(sys.argv[2]).read()
sys.exit(0 if "```c\n" + code + "```\n" in readme else 1)
PY'
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
