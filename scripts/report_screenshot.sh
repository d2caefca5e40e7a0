#!/usr/bin/env bash
# Render a `dpacct report` page in headless Chromium and save a screenshot, so
# a person can look at what a reader sees (not a test: needs Debian's
# chromium, which the test command does not install).
#   bash scripts/report_screenshot.sh SPEC [OUT.png] [DPACCT]
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
spec=${1:?usage: report_screenshot.sh SPEC [OUT.png] [DPACCT]}
out=${2:-report.png}
bin=${3:-build/dpacct}
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "report_screenshot: chromium is not installed (apt-get install chromium)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" report -o "$tmp/report.html" "$spec"
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,4200 \
    --screenshot="$tmp/shot.png" "file://$tmp/report.html" >/dev/null 2>&1
mv "$tmp/shot.png" "$out"
echo "report_screenshot: wrote $out"
