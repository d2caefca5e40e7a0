#!/usr/bin/env bash
# Build the Python wheel that carries libdpacct (with FFTW, GSL, gslcblas,
# jansson and sqlite3 bundled next to it) and the sdist, offline, into dist/:
#   dist/dpacct-<version>-py3-none-<platform>.whl   and   dist/dpacct-<version>.tar.gz
# The platform tag is manylinux_2_NN_<arch> when the bundled objects need only
# libc/libm/libpthread/libdl/the loader from the system (NN: the newest GLIBC
# symbol version they use), linux_<arch> otherwise (docs/python.md, "Install").
# The work is done by the repository's PEP 517 backend
# (python/build_backend/dpacct_wheel.py), the same that `pip install .` runs.
#
# usage: bash scripts/wheel.sh [--build-dir DIR] [--out DIR] [--no-deps]
#   --build-dir DIR  CMake build directory (default build-wheel; an existing
#                    Release build directory is reused as it is configured)
#   --out DIR        where the wheel and sdist go (default dist; earlier dpacct
#                    wheels and sdists there are replaced)
#   --no-deps        do not run scripts/deps.sh first
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
build="" out="" deps=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(realpath -m "$2")"; shift 2 ;;
    --out) out="$(realpath -m "$2")"; shift 2 ;;
    --no-deps) deps=0; shift ;;
    -h|--help) awk 'NR > 1 && /^# SPDX/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "wheel.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
[ -n "$out" ] || out="$PWD/dist"
[ "$deps" = 0 ] || bash scripts/deps.sh
py=/usr/bin/python3
[ -x "$py" ] || py="$(command -v python3)"
mkdir -p "$out"
rm -f "$out"/dpacct-*.whl "$out"/dpacct-*.tar.gz
"$py" python/build_backend/dpacct_wheel.py --sdist ${build:+--build-dir "$build"} "$out"
