#!/usr/bin/env bash
# Figures of `dpacct curve`: every kind in every format (SVG, PNG, PDF),
# the figure options, several specs on one plot, and the drawing order.
# A PDF is rasterized (pdftoppm, Debian's poppler-utils) and compared
# loosely with a stored reference (tests/figures/*.pgm, 24 dpi greyscale):
# the mean absolute difference of the pixels must stay below 0.75 of 255
# (fonts and anti-aliasing may differ by a little between cairo builds; the
# profile without its four other methods' curves differs by 2.5).
# DPA_UPDATE_FIGURES=1 rewrites the references.
# Usage: figures_test.sh DPACCT_BINARY SOURCE_DIR
# SPDX-License-Identifier: GPL-3.0-or-later
set -u
. "$(dirname "$0")/test_lib.sh"
test_setup figures "$@"
usage_error() {
    local name=$1; shift
    run "$@"
    check "$name" eval 'rc_is 2 && [ ! -s "$TMP/out" ] && grep -q "^dpacct: " "$TMP/err"'
}
SPEC='{"name": "DP-SGD 100 steps", "repeat": {"count": 100, "event": {"poisson": {"rate": 0.05, "event": {"gaussian": {"sigma": 1}}}}}}'
SPEC2='{"repeat": {"count": 30, "event": {"laplace": {"scale": 20}}}}'
REF="$SRC/tests/figures"
command -v pdftoppm >/dev/null || { echo "FAIL: pdftoppm (Debian poppler-utils) is needed"; exit 1; }

# pgm_diff A B: the mean absolute pixel difference of two P5 images of one size
pgm_diff() {
    python3 - "$1" "$2" <<'PY'
import sys
def read(p):
    d = open(p, 'rb').read()
    parts, i = [], 0
    while len(parts) < 4:
        while d[i:i+1].isspace(): i += 1
        if d[i:i+1] == b'#':
            while d[i:i+1] != b'\n': i += 1
            continue
        j = i
        while not d[j:j+1].isspace(): j += 1
        parts.append(d[i:j]); i = j
    w, h = int(parts[1]), int(parts[2])
    return w, h, d[i+1:i+1+w*h]
wa, ha, a = read(sys.argv[1]); wb, hb, b = read(sys.argv[2])
if (wa, ha) != (wb, hb): print(1e9); sys.exit()
print(sum(abs(x - y) for x, y in zip(a, b)) / len(a))
PY
}

for kind in profile tradeoff renyi; do
    for fmt in svg png pdf; do
        "$BIN" curve --kind $kind --method all --points 41 -o "$TMP/$kind.$fmt" "$SPEC" >"$TMP/out" 2>"$TMP/err"; rc=$?
        check "curve --kind $kind -o x.$fmt" eval 'rc_is 0 && out_empty && [ -s "$TMP/$kind.$fmt" ]'
    done
    check "$kind: the SVG is well-formed XML with its text as <text>, in Greek where the labels are" eval \
        'python3 -c "
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
t = [e.firstChild.data for e in d.getElementsByTagName(\"text\") if e.firstChild]
assert len(t) > 10 and not d.getElementsByTagName(\"symbol\"), t
assert any(c in \"\".join(t) for c in \"\u03b5\u03b1\u03b4\u03b2\"), t
" "$TMP/$kind.svg"'
    check "$kind: the PNG is a PNG of 760x500 pixels" eval \
        'python3 -c "
import struct, sys
d = open(sys.argv[1], \"rb\").read(24)
assert d[:8] == b\"\x89PNG\r\n\x1a\n\" and struct.unpack(\">II\", d[16:24]) == (760, 500)
" "$TMP/$kind.png"'
    pdftoppm -r 24 -gray "$TMP/$kind.pdf" "$TMP/$kind" && mv "$TMP/$kind"-1.pgm "$TMP/$kind.pgm"
    if [ -n "${DPA_UPDATE_FIGURES:-}" ]; then cp "$TMP/$kind.pgm" "$REF/$kind.pgm"; fi
    D=$(pgm_diff "$TMP/$kind.pgm" "$REF/$kind.pgm")
    B=$(python3 -c "
import sys; d=open(sys.argv[1],'rb').read(); print(sum(255-x for x in d[-253*166:])/(253*166))" "$TMP/$kind.pgm")
    check "$kind: the PDF rasterized matches its reference (mean |diff| $D < 0.75 of 255) and is not blank ($B)" \
        eval 'python3 -c "import sys; assert float(sys.argv[1]) < 0.75 and float(sys.argv[2]) > 5" "$D" "$B"'
done

# certified curves on top: in the SVG the pld curve's stroke (palette 1)
# comes after the estimates' (phi: palette 2, gdp: palette 5)
check "profile: the certified pld curve is drawn after (on top of) the phi and gdp estimates" eval \
    'python3 -c "
import sys
s = open(sys.argv[1]).read()
def strokes(rgb): return [i for i in range(len(s)) if s.startswith(\"stroke=\\\"rgb(\" + rgb + \")\\\" stroke-width=\\\"2\\\"\", i)]
pld, phi, gdp = strokes(\"214,38,41\"), strokes(\"43,161,43\"), strokes(\"140,87,74\")
assert pld and phi and gdp and min(pld) > max(phi[:1] + gdp[:1]), (pld[:2], phi[:2], gdp[:2])
" "$TMP/profile.svg"'

# size, resolution, title, log axes
"$BIN" curve --size 400x300 --dpi 144 --title "σ = 1, μ-GDP" --log-scale xy -o "$TMP/s.png" "$SPEC" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--size 400x300 --dpi 144: an 800x600 PNG" eval 'rc_is 0 && python3 -c "
import struct, sys
d = open(sys.argv[1], \"rb\").read(24); assert struct.unpack(\">II\", d[16:24]) == (800, 600)
" "$TMP/s.png"'
"$BIN" curve --size 400x300 --title "σ = 1, μ-GDP" --log-scale xy -o "$TMP/s.pdf" "$SPEC" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--size 400x300: a 400x300 pt PDF" eval 'rc_is 0 && grep -aq "MediaBox \[ *0 0 400 300 *\]" "$TMP/s.pdf"'
"$BIN" curve --title "σ = 1, μ-GDP" --log-scale xy --points 21 -o "$TMP/s.svg" "$SPEC" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--title in the SVG, log x ticks in decades" eval 'rc_is 0 && grep -q ">σ = 1, μ-GDP</text>" "$TMP/s.svg" && grep -q ">1e-1</text>" "$TMP/s.svg"'
"$BIN" curve --log-scale x --from 0.01 --to 4 --points 5 "$SPEC" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--log-scale x spaces the points evenly in log" eval 'rc_is 0 && python3 -c "
import csv, sys, math
r = list(csv.DictReader(open(sys.argv[1])))
x = [float(v[\"epsilon\"]) for v in r]
assert len(x) == 5 and x[0] == 0.01 and x[-1] == 4
q = [math.log(b / a) for a, b in zip(x, x[1:])]
assert max(q) - min(q) < 1e-9, x
" "$TMP/out"'

# several specs on one plot
"$BIN" curve --points 21 -o "$TMP/m.svg" "$SPEC" "$SPEC2" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "two specs on one plot: legend entries named by each spec" eval \
    'rc_is 0 && grep -q ">DP-SGD 100 steps: pld (bracket)</text>" "$TMP/m.svg" && grep -q ">spec 2: pld (bracket)</text>" "$TMP/m.svg"'
"$BIN" curve --points 3 --from 0 --to 2 --label "a,b" "$SPEC" "$SPEC2" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "two specs in CSV: a first column with the --label of each" eval \
    'rc_is 0 && [ "$(head -1 "$TMP/out")" = "spec,method,epsilon,delta_upper,delta_lower" ] && [ $(grep -c "^a,pld," "$TMP/out") = 3 ] && [ $(grep -c "^b,pld," "$TMP/out") = 3 ]'
"$BIN" curve --points 3 --from 0 --to 2 --json "$SPEC" "$SPEC2" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "two specs in JSON: specs[] with labels and curves" eval \
    'rc_is 0 && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert [s[\"label\"] for s in d[\"specs\"]] == [\"DP-SGD 100 steps\", \"spec 2\"]
assert all(len(s[\"curves\"][0][\"points\"]) == 3 for s in d[\"specs\"])
" "$TMP/out"'

# bad input
usage_error "--size too small" curve --size 10x10 -o "$TMP/x.svg" "$SPEC"
usage_error "--size malformed" curve --size 400 -o "$TMP/x.svg" "$SPEC"
usage_error "--dpi out of range" curve --dpi 5 -o "$TMP/x.png" "$SPEC"
usage_error "--log-scale unknown" curve --log-scale z "$SPEC"
usage_error "--label count differs from the SPECs" curve --label a,b,c "$SPEC" "$SPEC2"
usage_error "--log-scale x with --from 0" curve --log-scale x --from 0 --to 1 "$SPEC"
usage_error "PDF needs -o" curve --format pdf "$SPEC"
usage_error "--at with two specs" curve --kind tradeoff --at 0.1 "$SPEC" "$SPEC2"
usage_error "nine specs" curve "$SPEC" "$SPEC" "$SPEC" "$SPEC" "$SPEC" "$SPEC" "$SPEC" "$SPEC" "$SPEC"
finish
