#!/usr/bin/env bash
# The man page docs/dpacct.1 is what scripts/man.sh makes from the help texts
# of this build (help2man): regenerated, it is the committed file byte for
# byte, so help and manual cannot drift apart.  (tests/cli_dpsgd_test.sh
# checks that it names every command and option and formats without warnings.)
# usage: man_test.sh DPACCT_BINARY SOURCE_DIR
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
bin="$1"
src="$2"
if ! command -v help2man >/dev/null; then
    echo "FAIL: help2man not found (Debian: help2man; scripts/deps.sh installs it)"
    exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bash "$src/scripts/man.sh" "$bin" "$tmp/dpacct.1"
if ! cmp -s "$tmp/dpacct.1" "$src/docs/dpacct.1"; then
    echo "FAIL: docs/dpacct.1 is not what scripts/man.sh makes from the help texts; run"
    echo "  scripts/man.sh $bin"
    diff -u "$src/docs/dpacct.1" "$tmp/dpacct.1" | head -40
    exit 1
fi
echo "man_test: ok"
