#!/usr/bin/env bash
# Wheel test: scripts/wheel.sh builds the wheel and sdist (reusing this build
# directory's library), the wheel's tag matches what its objects need, it has
# no absolute RUNPATH, `pip wheel .` (the `pip install .` path) builds the same
# bytes offline, and installed with `pip install --no-index` into a venv
# without system site packages it computes the README's DP-SGD bracket, equal
# to the command's, with the system's FFTW, GSL, gslcblas, jansson and sqlite3
# hidden in a private mount namespace (where that is allowed: root, as in CI).
# Usage: wheel_test.sh <path-to-dpacct-binary> <source-dir>
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
BIN="$1"
build="$(cd "$(dirname "$1")" && pwd)"
src="${2:-$(cd "$(dirname "$0")/.." && pwd)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if eval "$2"; then echo "ok - $1"; pass=$((pass + 1)); else echo "not ok - $1"; fail=$((fail + 1)); return 1; fi; }
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
# offline; no bytecode written into the source tree by `pip wheel .`
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 DPACCT_WISDOM=off PYTHONDONTWRITEBYTECODE=1
unset DPACCT_LIBRARY LD_LIBRARY_PATH PYTHONPATH

bash "$src/scripts/wheel.sh" --no-deps --build-dir "$build" --out "$tmp/dist" >"$tmp/wheel.log" 2>&1; rc=$?
whl="$(ls "$tmp"/dist/*.whl 2>/dev/null)"
check "scripts/wheel.sh builds one wheel and one sdist" \
  '[ "$rc" -eq 0 ] && [ -f "$whl" ] && [ "$(ls "$tmp"/dist | wc -l)" -eq 2 ] && ls "$tmp"/dist/dpacct-*.tar.gz >/dev/null' ||
  cat "$tmp/wheel.log"
mkdir "$tmp/x"
(cd "$tmp/x" && "$py" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall()' "$whl")
libs="$tmp/x/dpacct/_libs"
check "the wheel holds the package, libdpacct.so.0 and its fftw3, gsl, gslcblas, jansson, sqlite3 (not libpq, cairo)" \
  '[ -f "$tmp/x/dpacct/_lib.py" ] && [ -f "$libs/libdpacct.so.0" ] &&
   for l in fftw3 gsl gslcblas jansson sqlite3; do ls "$libs"/lib$l-*.so.* >/dev/null 2>&1 || exit 1; done &&
   [ "$(ls "$libs" | wc -l)" -eq 6 ] && ! ls "$libs" | grep -q "pq\|cairo"'

# the tag, recomputed here from the objects with readelf: manylinux_2_NN when
# every DT_NEEDED is in the wheel or one of libc/libm/libpthread/libdl/the
# loader, NN the newest GLIBC_2.NN version needed; else linux
ext="" glibc=0
for f in "$libs"/*; do
  for n in $(readelf -d -W "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case "$n" in
      libc.so.6|libm.so.6|libpthread.so.0|libdl.so.2|ld-linux*) ;;
      *) [ -f "$libs/$n" ] || ext="$ext $n" ;;
    esac
  done
  for v in $(readelf -V -W "$f" | sed -n 's/.*Name: GLIBC_2\.\([0-9]*\).*Flags.*/\1/p'); do
    [ "$v" -gt "$glibc" ] && glibc="$v"
  done
done
arch="$(uname -m)"
if [ -z "$ext" ] && [ "$glibc" -gt 0 ]; then plat="manylinux_2_${glibc}_$arch"; else plat="linux_$arch"; fi
echo "# objects need GLIBC_2.$glibc at most; from the system besides the policy's:${ext:- nothing}; so $plat"
check "the wheel is tagged py3-none-$plat (file name and WHEEL)" \
  '[ "$(basename "$whl")" = "dpacct-$("$py" -c "import sys; sys.path.insert(0, sys.argv[1]); import dpacct; print(dpacct.__version__)" "$src/python")-py3-none-$plat.whl" ] &&
   grep -qx "Tag: py3-none-$plat" "$tmp"/x/dpacct-*.dist-info/WHEEL'
sysglibc="$(getconf GNU_LIBC_VERSION | sed -n 's/^glibc 2\.\([0-9]*\).*/\1/p')"
check "the objects need only the policy's libraries, and no newer glibc than this system's (2.$sysglibc)" \
  '[ -z "$ext" ] && [ "$glibc" -gt 0 ] && [ "$glibc" -le "$sysglibc" ]'
check "every object's RUNPATH is \$ORIGIN and none has an RPATH (no absolute search path)" \
  'for f in "$libs"/*; do
     [ "$(readelf -d -W "$f" | sed -n "s/.*(RUNPATH).*\[\(.*\)\]/\1/p")" = "\$ORIGIN" ] || exit 1
     ! readelf -d -W "$f" | grep -q "(RPATH)" || exit 1
   done'
check "the sdist holds the sources, pyproject.toml and PKG-INFO, and no build directory" \
  'tar tzf "$tmp"/dist/dpacct-*.tar.gz >"$tmp/sdist.txt" &&
   for f in pyproject.toml PKG-INFO CMakeLists.txt scripts/wheel.sh python/build_backend/dpacct_wheel.py python/dpacct/_lib.py include/dpacct/dpacct.h; do
     grep -q "^dpacct-[^/]*/$f\$" "$tmp/sdist.txt" || exit 1; done &&
   ! grep -q "^dpacct-[^/]*/\(build[^/]*\|dist\)/" "$tmp/sdist.txt"'

"$py" -m venv "$tmp/venv" >/dev/null 2>&1
vpy="$tmp/venv/bin/python"
check "a venv without system site packages" \
  'grep -qx "include-system-site-packages = false" "$tmp/venv/pyvenv.cfg" && ! "$vpy" -c "import numpy" 2>/dev/null'
"$vpy" -m pip install -q --no-index "$whl" >"$tmp/pip.log" 2>&1; rc=$?
check "pip install --no-index <wheel> into it" '[ "$rc" -eq 0 ]' || cat "$tmp/pip.log"
# `pip install .` builds through the same backend: `pip wheel .` gives the same bytes
(cd "$src" && "$vpy" -m pip wheel -q --no-index --no-deps --config-settings "build-dir=$build" -w "$tmp/pipwheel" .) \
  >"$tmp/pipw.log" 2>&1; rc=$?
check "pip wheel . (offline, build isolation on) builds the same wheel, byte for byte" \
  '[ "$rc" -eq 0 ] && cmp -s "$whl" "$tmp/pipwheel/$(basename "$whl")"' || cat "$tmp/pipw.log"

"$BIN" dpsgd --dataset-size 60000 --batch-size 256 --epochs 60 --noise 1.1 --delta 1e-5 --json >"$tmp/cli.json"
cat >"$tmp/run.py" <<'PY'
import ctypes, json, os, sys
hidden = sys.argv[2] == "1"
for name in ("libfftw3.so.3", "libgsl.so.27", "libgslcblas.so.0", "libjansson.so.4", "libsqlite3.so.0"):
    try:
        ctypes.CDLL(name)
        loads = True
    except OSError:
        loads = False
    assert loads != hidden, "%s %s" % (name, "loads" if loads else "does not load")
import dpacct
lib = os.path.realpath(dpacct.library_path())
venv = os.path.realpath(sys.prefix)
assert lib.startswith(venv + os.sep), (lib, venv)
r = dpacct.dpsgd_epsilon(noise_multiplier=1.1, delta=1e-5, dataset_size=60000, batch_size=256, epochs=60)
d = json.load(open(sys.argv[1]))
assert (r.upper, r.lower) == (d["epsilon_upper"], d["epsilon_lower"]), (r.upper, r.lower, d)
# every FFTW/GSL/jansson/sqlite3 mapped into the process is a copy from the wheel
maps = {l.split()[-1] for l in open("/proc/self/maps") if "/" in l}
deps = [m for m in maps if any(k in os.path.basename(m) for k in ("fftw", "gsl", "jansson", "sqlite", "dpacct.so"))]
assert len(deps) == 6 and all(m.startswith(os.path.dirname(lib) + os.sep) for m in deps), deps
print("bracket [%r, %r] from %s" % (r.lower, r.upper, lib))
PY
hide=""
for n in libfftw3.so.3 libgsl.so.27 libgslcblas.so.0 libjansson.so.4 libsqlite3.so.0; do
  p="$(ldconfig -p 2>/dev/null | awk -v n="$n" '$1 == n { print $NF }')"
  for f in $p; do hide="$hide $(readlink -f "$f")"; done
done
if [ -n "$hide" ] && unshare -m true 2>/dev/null; then
  # shellcheck disable=SC2086
  (cd "$tmp" && unshare -m sh -c 'py=$1 script=$2 json=$3; shift 3
      for f; do mount --bind /dev/null "$f" || exit 9; done
      exec "$py" "$script" "$json" 1' sh "$vpy" "$tmp/run.py" "$tmp/cli.json" $hide) >"$tmp/run.out" 2>&1; rc=$?
  check "with the system's fftw3, gsl, gslcblas, jansson, sqlite3 hidden, the wheel in the venv loads its own copies and gives the CLI's DP-SGD bracket, bit for bit" \
    '[ "$rc" -eq 0 ]'
else
  echo "# cannot hide the system's libraries here (needs root and unshare): run with them visible"
  (cd "$tmp" && "$vpy" "$tmp/run.py" "$tmp/cli.json" 0) >"$tmp/run.out" 2>&1; rc=$?
  check "the installed wheel loads its own copies from the venv and gives the CLI's DP-SGD bracket, bit for bit" \
    '[ "$rc" -eq 0 ]'
fi
sed 's/^/# /' "$tmp/run.out"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
