#!/usr/bin/env python3
"""The layering of src/ as docs/architecture.md states it, checked.

docs/architecture.md's "Layers" block lists the folders of src/ from the
bottom up, each with the folders it may use ("uses: a, b"; "-" for none).
This script checks, from the source and from the compiled objects:

1. the list is a layering: a folder uses only folders listed before it;
2. includes: a file of folder X includes "Y/..." only for Y = X or a folder X
   may use (the public headers "dpacct/..." declare types every layer shares;
   what is *called* is checked by 3);
3. symbols: the object files of folder X reference symbols defined in
   folder Y only for Y = X or a folder X may use (nm, so a declaration kept
   in the wrong header, or a call up the layers, is caught too);
4. no circles between the files of one folder: the graph "file a calls a
   function defined in file b" has no cycle.

usage: check_layers.py SOURCE_DIR BUILD_DIR
Exit status 0 when every check holds; 1 with one line per violation.
"""
import os
import re
import subprocess
import sys


def read_layers(src_dir):
    """[(folder, [used folders])] in the order of docs/architecture.md."""
    text = open(os.path.join(src_dir, "docs", "architecture.md"), encoding="utf-8").read()
    m = re.search(r"## Layers\n(.*?)\n```text\n(.*?)\n```", text, re.S)
    if not m:
        sys.exit("check_layers: no ```text block under '## Layers' in docs/architecture.md")
    entries, cur = [], None
    for line in m.group(2).split("\n"):
        head = re.match(r"src/([a-z_]+)(?:/|\.c)\s", line + " ")
        if head:
            cur = [head.group(1), ""]
            entries.append(cur)
        if cur is not None:
            cur[1] += " " + line
    layers = []
    for name, body in entries:
        u = re.search(r"\(uses:\s*([^)]*)\)", body)
        if not u:
            sys.exit(f"check_layers: src/{name} in docs/architecture.md has no '(uses: ...)'")
        used = [w.strip() for w in u.group(1).replace(";", ",").split(",")]
        layers.append((name, [w for w in used if w and w != "-"]))
    return layers


def folder_of(path, src_root):
    rel = os.path.relpath(path, src_root)
    parts = rel.split(os.sep)
    if len(parts) == 1:
        return os.path.splitext(parts[0])[0]  # src/status.c -> "status"
    return parts[0]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src_dir, build_dir = sys.argv[1], sys.argv[2]
    src_root = os.path.join(src_dir, "src")
    layers = read_layers(src_dir)
    names = [n for n, _ in layers]
    bad = []

    # 1. a layering
    allowed = {}
    for i, (n, used) in enumerate(layers):
        for u in used:
            if u not in names:
                # external libraries (jansson, sqlite3, ...) are not folders
                if os.path.isdir(os.path.join(src_root, u)):
                    bad.append(f"architecture.md: src/{n} uses src/{u}, which the list does not have")
                continue
            if names.index(u) >= i:
                bad.append(f"architecture.md: src/{n} uses src/{u}, which is not listed below it")
        allowed[n] = {u for u in used if u in names} | {n}
    folders = sorted(d for d in os.listdir(src_root) if os.path.isdir(os.path.join(src_root, d)))
    for d in folders:
        if d not in names:
            bad.append(f"architecture.md: src/{d}/ is missing from the layer list")

    # 2. includes
    inc = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)
    for d in folders + ["status"]:
        base = os.path.join(src_root, d)
        files = ([os.path.join(base, f) for f in sorted(os.listdir(base))] if os.path.isdir(base)
                 else [os.path.join(src_root, "status.c")])
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            for m in inc.finditer(open(f, encoding="utf-8").read()):
                y = m.group(1)
                if y == "dpacct":
                    continue
                if d in allowed and y not in allowed[d]:
                    bad.append(f"{os.path.relpath(f, src_dir)}: includes {y}/, "
                               f"which src/{d} may not use")

    # 3. and 4. symbols, from the object files
    objs = []
    for root, _, fs in os.walk(os.path.join(build_dir, "CMakeFiles")):
        m = re.search(r"CMakeFiles/(dpacct_obj|dpacct_cli)\.dir/src/", root + "/")
        if not m:
            continue
        for f in fs:
            if f.endswith(".c.o"):
                rel = os.path.relpath(os.path.join(root, f), os.path.join(build_dir, "CMakeFiles",
                                                                          m.group(1) + ".dir"))
                # objects of sources that no longer exist (a stale build) are left out
                if os.path.exists(os.path.join(src_dir, rel[:-2])):
                    objs.append((os.path.join(root, f), rel[:-2]))  # the source, e.g. src/num/fft.c
    if not objs:
        sys.exit(f"check_layers: no object files under {build_dir}/CMakeFiles")
    defined, undefined = {}, {}
    for path, rel in objs:
        out = subprocess.run(["nm", "-P", path], capture_output=True, text=True, check=True).stdout
        undefined[rel] = set()
        for line in out.splitlines():
            p = line.split()
            if len(p) < 2:
                continue
            sym, typ = p[0], p[1]
            if typ == "U":
                undefined[rel].add(sym)
            elif typ.isupper():
                defined.setdefault(sym, rel)
    calls = {rel: set() for rel in undefined}
    for rel, syms in undefined.items():
        for s in syms:
            if s in defined and defined[s] != rel:
                calls[rel].add(defined[s])
    for a, bs in sorted(calls.items()):
        fa = folder_of(os.path.join(src_dir, a), src_root)
        for b in sorted(bs):
            fb = folder_of(os.path.join(src_dir, b), src_root)
            if fa in allowed and fb not in allowed[fa]:
                syms = sorted(s for s in undefined[a] if defined.get(s) == b)
                bad.append(f"{a}: calls {', '.join(syms[:3])} of {b}, which src/{fa} may not use")
    # 4. circles between the files of one folder (Tarjan's strongly connected components)
    index, low, stack, on, sccs = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in calls[v]:
            if folder_of(os.path.join(src_dir, w), src_root) != folder_of(os.path.join(src_dir, v), src_root):
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    for v in sorted(calls):
        if v not in index:
            visit(v)
    for comp in sccs:
        bad.append("a circle of calls between " + ", ".join(comp))

    for b in bad:
        print(b)
    print(f"check_layers: {len(layers)} layers, {len(objs)} object files, {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
