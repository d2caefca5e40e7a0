#!/usr/bin/env bash
# The layering of src/ that docs/architecture.md states, checked against the
# includes and the compiled objects of this build (tests/check_layers.py).
# usage: layers_test.sh DPACCT_BINARY SOURCE_DIR
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
build="$(cd "$(dirname "$1")" && pwd)"
src="$2"
python3 "$src/tests/check_layers.py" "$src" "$build"
# the checker itself must see a violation: a copy of the layer list in which
# src/pld may no longer use src/exact (it does) has to fail
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs"
ln -s "$src/src" "$tmp/src"
sed 's/(uses: status, num, mech, model, exact)$/(uses: status, num, mech, model)/' \
    "$src/docs/architecture.md" > "$tmp/docs/architecture.md"
if out="$(python3 "$src/tests/check_layers.py" "$tmp" "$build")"; then
    echo "FAIL: check_layers.py accepted src/pld calling src/exact"; exit 1
fi
printf '%s\n' "$out" | grep -q '^src/pld/.*includes exact/, which src/pld may not use$' || {
    echo "FAIL: the include of exact/ by src/pld was not reported:"; printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out" | grep -q '^src/pld/.*: calls .* of src/exact/.*, which src/pld may not use$' || {
    echo "FAIL: the calls of src/exact by src/pld were not reported:"; printf '%s\n' "$out"; exit 1; }
echo "layers_test: ok"
