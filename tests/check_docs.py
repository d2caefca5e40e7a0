#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs the `$ command` blocks of README.md and docs/*.md and compares their output with
the text shown: the docs are true by construction.

usage: check_docs.py DPACCT_BINARY SOURCE_DIR [FILE.md...]   (default: all of them)

A block is a fenced code block (any language) with at least one line starting with `$ `.
Each such line is a command for bash (continued over the next lines while a quote is open
or the line ends with a backslash); the lines after it, up to the next command, are its
output (stdout and stderr together), followed by `exit status N` when the command exits
with N != 0.  The commands of one block run in one bash process (so `export` carries
over), in a fresh temporary directory holding a copy of examples/ and scripts/, docs/img/ and a link
`build` to the directory of the binary under test; `dpacct` on PATH is that binary and
HOME is the temporary directory (nothing is written to the user's home or the checkout).

Comparison (the conventions of docs/python.md's doctest session, python/tests/test_docs.py,
with numbers compared as numbers):
- whitespace only separates words: its amount and line breaks do not matter;
- a number shown with k significant digits matches an output number that rounds to it
  (up, down or to nearest) at those k digits, so the docs may show fewer digits than the
  program prints, never more;
- `...` in the docs matches any output (doctest's ELLIPSIS);
- timings (a number followed by `ms`) and ISO 8601 timestamps match any timing and any
  timestamp.

A block that cannot run in a test carries, on the line before its fence,
`<!-- docs-test: skip (reason) -->`; one that cannot run in a sanitizer build (DPA_SANITIZE
in the binary directory's CMakeCache.txt) `<!-- docs-test: skip-if-sanitized (reason) -->`.

Also checked: every path of the repository that a document, source, test or script
names (src/..., docs/..., tests/...) exists; a code block that shows a file of examples/ (its first line is the file's
first line) is a copy of that file; every relative markdown link in README.md and docs/*.md points to an
existing file, and no document names MATH.md or REFERENCE-VALUES.md (files outside the
repository).

Prints `docs_test: N blocks checked, M skipped`; exits 1 listing every mismatch
(file:line, expected vs got)."""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

SKIP_RE = re.compile(r"^<!--\s*docs-test:\s*(skip|skip-if-sanitized)\s*\((.+)\)\s*-->\s*$")
FENCE_RE = re.compile(r"^(```+|~~~+)")
NUM_RE = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.]*\w)")
TIMING_RE = re.compile(r"(?<![\w.])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?\s*ms\b")
STAMP_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?")
SEP = "@@docs-test-separator@@"
TIMEOUT = 600


def fenced(lines):
    """Yields (index of the opening fence, the lines between the fences) for
    every fenced code block of a document's lines."""
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith(m.group(1)):
            j += 1
        yield i, lines[i + 1:j]
        i = j + 1


def blocks(path):
    """Yields (line of the fence, (skip kind, reason) or (None, None),
    [(line, command, expected output)])."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for start, body in fenced(lines):
        if not any(l.startswith("$ ") for l in body):
            continue
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        sm = SKIP_RE.match(lines[k]) if k >= 0 else None
        cmds = []
        n = 0
        while n < len(body):
            if not body[n].startswith("$ "):
                n += 1  # text before the first command: not output of anything
                continue
            cline, cmd = start + 2 + n, body[n][2:]
            n += 1
            while n < len(body) and not complete(cmd):
                cmd += "\n" + body[n]
                n += 1
            out = []
            while n < len(body) and not body[n].startswith("$ "):
                out.append(body[n])
                n += 1
            cmds.append((cline, cmd, "\n".join(out)))
        yield start + 1, (sm.groups() if sm else (None, None)), cmds


def complete(cmd):
    if cmd.rstrip().endswith("\\"):
        return False
    try:
        shlex.split(cmd, comments=True)
    except ValueError:
        return False
    return True


def tokens(text, expected):
    """The numbers, other characters and wildcards of text, whitespace dropped."""
    text = STAMP_RE.sub(" \0stamp ", text)
    text = TIMING_RE.sub(" \0ms ", text)
    if expected:
        text = text.replace("...", " \0any ")
    out = []
    for word in text.split():
        if word.startswith("\0"):
            out.append(("wild", word[1:]))
            continue
        pos = 0
        for m in NUM_RE.finditer(word):
            out += [("text", c) for c in word[pos:m.start()]]
            out.append(("num", m.group(0)))
            pos = m.end()
        out += [("text", c) for c in word[pos:]]
    return out


def num_match(shown, got):
    e, g = Decimal(shown), Decimal(got)
    if e == 0:
        return g == 0
    digits = re.sub(r"[eE].*", "", shown).lstrip("+-").replace(".", "").lstrip("0")
    quantum = Decimal(1).scaleb(e.adjusted() - max(len(digits), 1) + 1)
    return abs(g - e) < quantum


def tok_match(a, b):
    if a[0] == "num" and b[0] == "num":
        return num_match(a[1], b[1])
    return a == b


def seg_at(seg, got, p):
    return p + len(seg) <= len(got) and all(tok_match(s, got[p + i]) for i, s in enumerate(seg))


def matches(exp, got):
    """exp's tokens against got's, `...` matching any run (leftmost placement of each
    segment between wildcards, which is optimal for fixed-length segments)."""
    segs = [[]]
    for t in exp:
        if t == ("wild", "any"):
            segs.append([])
        else:
            segs[-1].append(t)
    if len(segs) == 1:
        return len(exp) == len(got) and seg_at(exp, got, 0)
    first, last, mids = segs[0], segs[-1], segs[1:-1]
    if not seg_at(first, got, 0):
        return False
    p, end = len(first), len(got) - len(last)
    for seg in mids:
        while p + len(seg) <= end and not seg_at(seg, got, p):
            p += 1
        if p + len(seg) > end:
            return False
        p += len(seg)
    return end >= p and seg_at(last, got, end)


def run_block(cmds, binary, src):
    tmp = tempfile.mkdtemp(prefix="dpacct_docs.")
    try:
        shutil.copytree(os.path.join(src, "examples"), os.path.join(tmp, "examples"))
        shutil.copytree(os.path.join(src, "scripts"), os.path.join(tmp, "scripts"))
        os.makedirs(os.path.join(tmp, "docs", "img"))
        os.symlink(os.path.dirname(binary), os.path.join(tmp, "build"))
        bindir = os.path.join(tmp, ".bin")
        os.makedirs(bindir)
        os.symlink(binary, os.path.join(bindir, "dpacct"))
        script = ["set +e"]
        for _, cmd, _ in cmds:
            script += ["{ true", cmd, "} </dev/null 2>&1", "rc=$?",
                       '[ "$rc" -ne 0 ] && echo "exit status $rc"', "echo %s" % SEP]
        env = dict(os.environ, HOME=tmp, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
                   LC_ALL="C")
        env.pop("DPACCT_WISDOM", None)
        # under the sanitizers: LeakSanitizer's list of the suppressions it used
        # (tests/lsan.supp) is a report about the run, not the command's output
        if env.get("LSAN_OPTIONS"):
            env["LSAN_OPTIONS"] += ":print_suppressions=0"
        r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT, check=False)
        outs = r.stdout.decode("utf-8", "replace").split(SEP + "\n")
        return outs[:len(cmds)] + [""] * (len(cmds) - len(outs[:len(cmds)]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def doc_files(src):
    return [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))


LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def check_links(src, path, failures):
    text = open(path, encoding="utf-8").read()
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        where = "%s:%d" % (os.path.relpath(path, src), n)
        for bad in ("MATH.md", "REFERENCE-VALUES"):
            if bad in line:
                failures.append("%s: names %s, which is not in the repository" % (where, bad))
        m = FENCE_RE.match(line)
        if m and (fence is None or line.startswith(fence)):
            fence = m.group(1) if fence is None else None
            continue
        if fence is not None:
            continue  # links are markdown's, not a code block's
        for m in LINK_RE.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            file = target.split("#")[0]
            if not os.path.exists(os.path.join(os.path.dirname(path), file)):
                failures.append("%s: link to %s, which does not exist" % (where, target))


PATH_RE = re.compile(r"(?<![\w./$-])((?:src|include|tests|scripts|bench|examples|python|docs|cmake)/"
                     r"[\w./-]*[\w-]\.(?:c|h|py|sh|md|json|txt|in|scd|h2m|1))\b")


def check_paths(src, failures):
    """Every repository path that the docs, the sources, the tests and the scripts
    name (src/pld/build.c, docs/spec.md, ...) exists: no citation of a moved or
    removed file."""
    files = doc_files(src)
    for top in ("src", "include", "tests", "scripts", "bench", "examples", "python"):
        for root, _, names in os.walk(os.path.join(src, top)):
            files += [os.path.join(root, n) for n in names
                      if n.endswith((".c", ".h", ".py", ".sh", ".md", ".txt"))]
    for path in files:
        try:
            lines = open(path, encoding="utf-8").read().split("\n")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(lines, 1):
            for m in PATH_RE.finditer(line):
                name = m.group(1)
                if "*" in name or "<" in name or "XXX" in name:
                    continue
                if not os.path.exists(os.path.join(src, name)):
                    failures.append("%s:%d: names %s, which is not in the repository" % (
                        os.path.relpath(path, src), n, name))


def check_source_copies(src, path, failures):
    """A fenced code block that reproduces a file of examples/ (its first line is that
    file's first line) must be that file, byte for byte up to trailing whitespace."""
    lines = open(path, encoding="utf-8").read().split("\n")
    firsts = {}
    for f in sorted(glob.glob(os.path.join(src, "examples", "*"))):
        try:
            text = open(f, encoding="utf-8").read()
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        first = text.split("\n", 1)[0]
        # a distinctive first line (a comment, a title), not "{" of every JSON file
        if len(first) >= 20 and re.search(r"[A-Za-z]{3}", first):
            firsts.setdefault(first, []).append((f, text))
    for i, body in fenced(lines):
        if body and body[0] in firsts:
            shown = "\n".join(body).rstrip()
            if not any(text.rstrip() == shown for _, text in firsts[body[0]]):
                names = ", ".join(os.path.relpath(f, src) for f, _ in firsts[body[0]])
                failures.append("%s:%d: the code block is not a copy of %s" % (
                    os.path.relpath(path, src), i + 1, names))


def main():
    binary, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    failures, checked, skipped = [], 0, []
    cache = os.path.join(os.path.dirname(binary), "CMakeCache.txt")
    sanitized = os.path.exists(cache) and re.search(
        r"^DPA_SANITIZE:BOOL=(ON|1|TRUE|YES)$", open(cache).read(), re.M | re.I) is not None
    if not sys.argv[3:]:
        check_paths(src, failures)
    for path in [os.path.abspath(f) for f in sys.argv[3:]] or doc_files(src):
        rel = os.path.relpath(path, src)
        check_links(src, path, failures)
        check_source_copies(src, path, failures)
        for line, (kind, reason), cmds in blocks(path):
            if kind == "skip" or (kind == "skip-if-sanitized" and sanitized):
                skipped.append("%s:%d (%s)" % (rel, line, reason))
                continue
            checked += 1
            try:
                outs = run_block(cmds, binary, src)
            except subprocess.TimeoutExpired:
                failures.append("%s:%d: the block did not finish in %d s" % (rel, line, TIMEOUT))
                continue
            for (cline, cmd, exp), got in zip(cmds, outs):
                if not matches(tokens(exp, True), tokens(got, False)):
                    failures.append("%s:%d: $ %s\n--- expected\n%s\n--- got\n%s" % (
                        rel, cline, cmd, exp.rstrip(), got.rstrip()))
    for s in skipped:
        print("skipped: " + s)
    for f in failures:
        print("MISMATCH " + f + "\n")
    print("docs_test: %d blocks checked, %d skipped" % (checked, len(skipped)))
    if failures:
        print("docs_test: %d mismatches" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
