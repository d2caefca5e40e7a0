#!/usr/bin/env bash
# Fetch the peers' Python sources for bench/peers.py into DIR (not into the
# repository: their code is not part of dpacct).
#
# usage: bench/fetch-peers.sh [DIR]      (default $DPACCT_PEERS_DIR, else /tmp/dpacct-peers)
#
# Layout written (what bench/peers.py looks for):
#   DIR/dp_accounting/dp_accounting/   google/differential-privacy: python/dp_accounting
#   DIR/prv_accountant/prv_accountant/ microsoft/prv_accountant
#   DIR/autodp/autodp/                 yuxiangw/autodp
#   DIR/opacus/opacus/                 pytorch/opacus
#   DIR/jax_privacy/jax_privacy/       google-deepmind/jax_privacy (python/tests, bench/dp_accounting_compare.py)
# Each source is a GitHub URL (shallow clone) unless overridden by a git
# directory or URL in DP_ACCOUNTING_GIT, PRV_ACCOUNTANT_GIT, AUTODP_GIT,
# OPACUS_GIT, JAX_PRIVACY_GIT (e.g. an existing clone's .git).  A source that cannot be had is
# reported and left out; the script exits 0 as long as DIR could be made.
# Their Python dependencies are Debian packages, see bench/README.md.
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
dir="${1:-${DPACCT_PEERS_DIR:-/tmp/dpacct-peers}}"
mkdir -p "$dir" || exit 1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# fetch NAME SOURCE SUBDIR: export SUBDIR (a path in the repository, "." for
# all of it) of SOURCE's HEAD to DIR/NAME
fetch() {
  local name="$1" src="$2" sub="$3" gitdir
  if [ -d "$src" ]; then
    gitdir="$src"
  else
    gitdir="$tmp/$name.git"
    if ! git clone -q --bare --depth 1 "$src" "$gitdir" 2>"$tmp/$name.err"; then
      echo "fetch-peers: $name: cannot clone $src ($(tail -n1 "$tmp/$name.err")); skipped"
      return 0
    fi
  fi
  rm -rf "${dir:?}/$name"
  mkdir -p "$dir/$name"
  local strip=0
  [ "$sub" = . ] || strip=$(($(tr -cd / <<<"$sub" | wc -c) + 1))
  if git --git-dir="$gitdir" archive HEAD "$sub" | tar -x -C "$dir/$name" --strip-components="$strip"; then
    echo "fetch-peers: $name: $(git --git-dir="$gitdir" log -1 --format='%h %cs' HEAD) -> $dir/$name"
  else
    echo "fetch-peers: $name: cannot export $sub from $src; skipped"
    rm -rf "${dir:?}/$name"
  fi
}

fetch dp_accounting "${DP_ACCOUNTING_GIT:-https://github.com/google/differential-privacy}" python/dp_accounting
fetch prv_accountant "${PRV_ACCOUNTANT_GIT:-https://github.com/microsoft/prv_accountant}" .
fetch autodp "${AUTODP_GIT:-https://github.com/yuxiangw/autodp}" .
fetch opacus "${OPACUS_GIT:-https://github.com/pytorch/opacus}" .
fetch jax_privacy "${JAX_PRIVACY_GIT:-https://github.com/google-deepmind/jax_privacy}" .
exit 0
