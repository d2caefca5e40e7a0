#!/usr/bin/env bash
# Where the time of a benchmark case goes: runs the case's query through the
# dpacct command under `perf record` (call graphs, 10 kHz) and prints the
# share of samples per part of the code (self time, all threads), then the
# top symbols.  Needs perf (Debian: linux-perf) and a build with frame
# pointers, which this script makes in build-prof/.
#
# usage: bench/profile.sh [--reps N] CASE ...   (CASE: ids as in `bench --list`)
# The FFT plan cache (a directory) is warmed by one unprofiled run first (as for the
# command's second and later runs); set DPACCT_WISDOM=off to profile a first run.
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "profile.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
reps=1
if [ "${1:-}" = "--reps" ]; then reps=$2; shift 2; fi
build=build-prof
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDPA_BUILD_TESTS=OFF -DDPA_BUILD_BENCH=ON \
  -DCMAKE_C_FLAGS="-fno-omit-frame-pointer -g" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
export DPACCT_WISDOM="${DPACCT_WISDOM:-$PWD/$build/fftw-plans}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for c in "$@"; do
  line=$("$build/bench" --specs | awk -F'\t' -v id="$c" '$1 == id')
  [ -n "$line" ] || { echo "profile.sh: no case $c" >&2; exit 2; }
  query=$(cut -f2 <<<"$line"); arg=$(cut -f3 <<<"$line"); target=$(cut -f4 <<<"$line"); json=$(cut -f5- <<<"$line")
  case $query in
    epsilon) args=(epsilon --delta "$arg") ;;
    delta) args=(delta --epsilon "$arg") ;;
    calibrate) args=(calibrate --epsilon "$target" --delta "$arg") ;;
  esac
  "$build/dpacct" "${args[@]}" "$json" >/dev/null   # warm the plan cache
  for ((r = 0; r < reps; r++)); do
    perf record -q -F 10000 -g -o "$tmp/perf.$r" "$build/dpacct" "${args[@]}" "$json" >/dev/null 2>&1
  done
  echo "== $c"
  for ((r = 0; r < reps; r++)); do perf report -i "$tmp/perf.$r" --no-children --sort dso,sym --stdio 2>/dev/null; done |
  awk '
    /^ +[0-9.]+%/ {
      p = $1; sub("%", "", p); dso = $2; sym = $4
      part = "other"
      if (dso ~ /fftw/) part = (sym ~ /md5|plan|solver|choose|applicable|mkplan|twiddle/) ? "FFTW planning" : "FFTW transforms"
      else if (dso ~ /kernel/) part = "kernel (page faults, process start and exit)"
      else if (dso ~ /libm/) part = "special functions (libm)"
      else if (dso ~ /libc/) part = (sym ~ /mem(set|move|cpy)/) ? "memset/memcpy" : "malloc and other libc"
      else if (sym ~ /ctail|ndtr|log_add|log_sub|log1mexp|erfc/) part = "special functions (tails of pairs)"
      else if (sym ~ /cells_build|adaptive_cells|cells_reverse/) part = "discretization: cells"
      else if (sym ~ /cells_discretize|build_opt|hockey_area|cells_from_composed/) part = "discretization: upper/lower measures"
      else if (sym ~ /log_mgf/) part = "composition: window (Chernoff)"
      else if (sym ~ /^compose|dpa_compose|fold|unfold/) part = "composition: spectra, powers, folding"
      else if (sym ~ /prepare|composed_delta|composed_epsilon/) part = "query tables and queries"
      else if (sym ~ /exact_power|precomposed|composed_atoms/) part = "precomposition of atom leaves"
      else if (sym ~ /rr_|binom/) part = "exact (eps, delta) method"
      else if (dso ~ /ld-linux|jansson|gsl/) part = "loader, JSON, GSL"
      share[part] += p; tot += p
      top[dso " " sym] += p
    }
    END {
      for (k in share) printf "  %5.1f%%  %s\n", 100 * share[k] / tot, k | "sort -rn"
      close("sort -rn")
      print "  top symbols:"
      for (k in top) printf "    %5.1f%%  %s\n", 100 * top[k] / tot, k | "sort -rn | head -8"
      close("sort -rn | head -8")
    }'
done
