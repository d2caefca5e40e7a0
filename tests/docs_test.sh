#!/usr/bin/env bash
# Docs test: runs every `$ command` block of README.md and docs/*.md with the
# binary under test and compares the output with the text shown, and checks
# the documents' relative links (tests/check_docs.py says how).
# usage: bash tests/docs_test.sh PATH/TO/dpacct SOURCE_DIR
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
bin=${1:?usage: docs_test.sh DPACCT_BINARY SOURCE_DIR}
src=${2:-$(cd "$(dirname "$0")/.." && pwd)}
exec python3 "$src/tests/check_docs.py" "$bin" "$src"
