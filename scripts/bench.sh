#!/usr/bin/env bash
# Build dpacct (Release, in its own build directory), run the benchmark
# (bench/bench.c) and, when the peers' sources are present, the same cases
# through other accountants (bench/peers.py); then print one table with the
# ratio peer time / dpacct time per case.  Missing peers never make it fail.
#
# usage: scripts/bench.sh [options] [CASE ...]
#   CASE               case numbers, ids or id substrings (bench --list); default all
#   --reps N           dpacct repetitions per case (default 5)
#   --peers-dir DIR    where the peers' sources are (default $DPACCT_PEERS_DIR,
#                      else /tmp/dpacct-peers; see bench/README.md to fetch them)
#   --no-peers         run dpacct only
#   --peers-timeout S  seconds per (case, peer) job (default 300)
#   --build-dir DIR    build directory (default build-bench)
#   --out DIR          where the TSV results go (default <build-dir>/results)
# Environment: PYTHON (interpreter for the peers; default /usr/bin/python3 if
# present, else python3), PEERS_ARGS (extra bench/peers.py options, e.g.
# "--skip hetero1000:dp_accounting.pld --peers dp_accounting.pld,exact").
# Exit status: that of the benchmark (0 unless a case could not run or its
# bounds contradict its reference interval); missed goals and peers do not count.
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
cd "$(dirname "$0")/.."

reps=5
peers_dir="${DPACCT_PEERS_DIR:-/tmp/dpacct-peers}"
use_peers=1
peers_timeout=300
build="build-bench"
out=""
cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --peers-dir) peers_dir="$2"; shift 2 ;;
    --no-peers) use_peers=0; shift ;;
    --peers-timeout) peers_timeout="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^# SPDX/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
    *) cases+=("$1"); shift ;;
  esac
done
[ -n "$out" ] || out="$build/results"

bash scripts/deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDPA_BUILD_TESTS=OFF -DDPA_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench dpacct_cli >/dev/null
mkdir -p "$out"
bench_tsv="$out/bench.tsv"
peers_tsv="$out/peers.tsv"
rm -f "$bench_tsv" "$peers_tsv"

echo "== dpacct ($build/bench -r $reps ${cases[*]:-})"
status=0
"./$build/bench" -r "$reps" --tsv-file "$bench_tsv" ${cases[@]+"${cases[@]}"} || status=$?

if [ "$use_peers" = 0 ]; then
  echo; echo "== peers: not run (--no-peers)"
  exit "$status"
fi
py="${PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py="$(command -v python3 || true)"; fi
fi
if [ -z "$py" ]; then
  echo; echo "== peers: skipped (no python3)"
  exit "$status"
fi
if [ ! -d "$peers_dir" ]; then
  echo; echo "== peers: $peers_dir not found; running only the closed-form reference (peer 'exact')"
  echo "   (see bench/README.md to fetch dp_accounting, prv_accountant, autodp, opacus)"
fi
echo; echo "== peers ($py bench/peers.py --peers-dir $peers_dir)"
# shellcheck disable=SC2086
"$py" bench/peers.py --bench "./$build/bench" --peers-dir "$peers_dir" --timeout "$peers_timeout" \
  --tsv "$peers_tsv" ${PEERS_ARGS:-} ${cases[@]+"${cases[@]}"} ||
  echo "bench.sh: warning: the peer runner failed (status $?); dpacct results above stand" >&2

if [ ! -s "$peers_tsv" ] || [ ! -s "$bench_tsv" ]; then
  exit "$status"
fi
echo; echo "== combined (ratio = peer median time / dpacct whole-command time (the cli column; the in-process"
echo "   median where the command was not run); > 1: dpacct is faster)"
awk -F'\t' '
  FNR == 1 { next }
  NR == FNR { up[$2] = $6; lo[$2] = $7; ms[$2] = ($20 != "" && $20 != "nan" ? $20 : $11); res[$2] = $16; next }
  {
    c = $1; peer = $4; st = $5
    if (!(c in ms)) next
    if (!hdr) {
      print "| case | dpacct [lower, upper] | dpacct cli ms | peer | peer value | peer ms | ratio |"
      print "|---|---|---|---|---|---|---|"
      hdr = 1
    }
    d = (up[c] == "" ? res[c] : sprintf("[%.8g, %.8g]", lo[c], up[c]))
    dms = (ms[c] == "" ? "" : sprintf("%.4g", ms[c]))
    if (st == "ok") {
      ratio = (ms[c] > 0 ? sprintf("%.3g", $10 / ms[c]) : "")
      printf "| %s | %s | %s | %s | %.8g | %.4g | %s |\n", c, d, dms, peer, $6, $10, ratio
    } else if (st != "n/a" && st != "skip") {
      printf "| %s | %s | %s | %s | %s | | |\n", c, d, dms, peer, st
    }
  }' "$bench_tsv" "$peers_tsv"
echo "(peers that do not support a case (n/a) or are missing (skip) are left out; see the peers table above)"
exit "$status"
