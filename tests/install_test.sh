#!/usr/bin/env bash
# Install test: cmake --install into a temporary prefix, then build a program
# against the installed library through pkg-config (shared and static) and run it.
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
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
