#!/usr/bin/env bash
# Regenerate the man page docs/dpacct.1 from the command's own help texts
# (src/cli/help.c, `dpacct bandmf --help` in src/cli/bandmf.c, `dpacct ledger
# --help` in src/cli/ledger_args.c, `dpacct serve --help` in src/cli/serve.c) with help2man,
# plus the sections help does not hold (exit status, environment, files,
# diagnostics, see also) from docs/dpacct.h2m.  The help texts are the one
# source: `dpacct help CMD` prints them, the man page is made from them.
#   scripts/man.sh [BIN [OUT]]    BIN: the built dpacct (default build/dpacct),
#                                 OUT: default docs/dpacct.1 ("-": stdout)
# tests/man_test.sh checks that the committed page is what this makes.
# Needs help2man (Debian: help2man; scripts/deps.sh installs it).
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
COMMANDS="epsilon delta profile calibrate renyi curve report dpsgd tail bandmf ledger serve"

# --document BIN: the help texts as one document in help2man's layout:
# every command's usage lines first (SYNOPSIS), the tool's description, then
# a COMMANDS section with each command's help under a heading "dpacct CMD:"
# (its usage forms, then its help without its usage, the
# accounting options and the SPEC note (both printed once, at the end), its
# examples collected under one "Examples:" heading.
if [ "${1:-}" = "--document" ]; then
  BIN=$2
  shift 2
  if [ "${1:-}" = "--version" ]; then
    "$BIN" --version | head -n 1
    exit 0
  fi
  usage() { # the Usage block of a help text: one line per form
    awk 'NR == 1 { sub(/^Usage: /, ""); line = $0; next }
         /^$/ { print line; exit }
         /^       dpacct / { print line; sub(/^ +/, ""); line = $0; next }
         { sub(/^ +/, " "); line = line $0 }' "$1"
  }
  body() { # a help text without its Usage block, accounting options, SPEC note, examples
    awk 'NR == 1, /^$/ { next }
         /^Accounting options \(all commands\):$/ { skip = 1 }
         /^SPEC is a JSON event spec/ { skip = 1 }
         /^Examples?:$/ { skip = 1 }
         skip && /^$/ { skip = 0; next }
         /^Options:$/ { print "Options of dpacct " cmd ":"; next }
         !skip' cmd="$2" "$1"
  }
  examples() { # the examples of a help text, "  $ " before each (help2man:
               # constant width), continuation lines joined, blank lines dropped
    awk '/^Examples?:$/ { on = 1; next }
         on && /^$/ { next }
         on && /^  [^ ]/ { if (line != "") print line; line = "  $ " substr($0, 3); next }
         on && /^   / { sub(/^ +/, " "); line = line $0; next }
         on { on = 0 }
         END { if (line != "") print line }' "$1"
  }
  T=$(mktemp -d)
  trap 'rm -rf "$T"' EXIT
  "$BIN" --help > "$T/main"
  for c in $COMMANDS; do "$BIN" help "$c" > "$T/$c"; done
  first=1
  for c in $COMMANDS; do
    usage "$T/$c" | while IFS= read -r u; do
      if [ $first = 1 ]; then printf 'Usage: %s\n' "$u"; else printf '  or:  %s\n' "$u"; fi
      first=0
    done
    first=0
  done
  printf '  or:  dpacct help [COMMAND] | --help | --version | COMMAND --help\n\n'
  # the description: the main help's paragraph after its usage
  awk 'NR == 1, /^$/ { next } /^$/ { exit } { print }' "$T/main"
  echo
  echo "*Commands*"
  echo
  for c in $COMMANDS; do
    # a sub-section: the heading, then its usage forms indented
    printf 'dpacct %s:\n' "$c"
    usage "$T/$c" | sed 's/^/  /'
    echo
    body "$T/$c" "$c" | cat -s
    echo
  done
  sed -n '/^Accounting options (all commands):$/,/^$/p' "$T/epsilon"
  sed -n '/^SPEC is a JSON event spec/,/^$/p' "$T/epsilon"
  # the main help's closing paragraphs (exit status aside: its own section)
  awk '/^Run .dpacct help COMMAND/ { on = 1 } on' "$T/main"
  echo
  echo "Examples:"
  for f in main $COMMANDS; do examples "$T/$f"; done | awk '!seen[$0]++' 
  exit 0
fi

BIN=$(realpath "${1:-$ROOT/build/dpacct}")
OUT=${2:-$ROOT/docs/dpacct.1}
if ! command -v help2man >/dev/null; then
  echo "man.sh: help2man not found (Debian: help2man; scripts/deps.sh installs it)" >&2
  exit 1
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
printf '#!/bin/sh\nexec bash "%s" --document "%s" "$@"\n' "$ROOT/scripts/man.sh" "$BIN" > "$W/dpacct"
chmod +x "$W/dpacct"
# a fixed date and locale: the same help texts give the same page
LC_ALL=C SOURCE_DATE_EPOCH=1735689600 help2man --no-info --section 1 \
  --name "certified differential-privacy accounting" \
  --include "$ROOT/docs/dpacct.h2m" "$W/dpacct" > "$W/raw"
# after help2man's first line: what the file holds, where it comes from
{
  head -n 1 "$W/raw"
  echo '.\" dpacct(1): the manual of the dpacct command, made by scripts/man.sh from the'
  echo '.\" help texts (src/cli/help.c, bandmf.c, ledger_args.c) and docs/dpacct.h2m: edit those.'
  echo '.\" SPDX-License-Identifier: GPL-3.0-or-later'
  tail -n +2 "$W/raw"
} > "$W/page"
if [ "$OUT" = "-" ]; then cat "$W/page"; else cp "$W/page" "$OUT"; fi
