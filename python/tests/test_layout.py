# SPDX-License-Identifier: GPL-3.0-or-later
"""The ctypes structures match the C headers: sizes, offsets, field sizes.

A small C program, compiled against include/dpacct/, prints sizeof and
offsetof of every field the binding declares; the ctypes layout must agree
exactly.  Skipped when no C compiler or no headers are at hand (an installed
package without its source tree)."""
import ctypes
import os
import shutil
import subprocess

import pytest

from dpacct import _lib
from conftest import CHECKOUT

INCLUDE = os.environ.get("DPACCT_INCLUDE", os.path.join(CHECKOUT, "include"))
CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def _c_program():
    lines = ["#include <stdio.h>", "#include <stddef.h>", "#include <dpacct/dpacct.h>",
             "int main(void) {"]
    for cname, st in _lib.STRUCTS.items():
        lines.append('printf("%s %%zu\\n", sizeof(%s));' % (cname, cname))
        for f, _t in st._fields_:
            lines.append('printf("%s.%s %%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));'
                         % (cname, f, cname, f, cname, f))
    lines.append('printf("DPA_ERROR_MESSAGE_MAX %d\\n", DPA_ERROR_MESSAGE_MAX);')
    lines.append("return 0; }")
    return "\n".join(lines)


def _expected():
    out = {}
    for cname, st in _lib.STRUCTS.items():
        out[cname] = str(ctypes.sizeof(st))
        for f, _t in st._fields_:
            d = getattr(st, f)
            out["%s.%s" % (cname, f)] = "%d %d" % (d.offset, d.size)
    out["DPA_ERROR_MESSAGE_MAX"] = str(_lib.DPA_ERROR_MESSAGE_MAX)
    return out


@pytest.mark.skipif(CC is None or not os.path.exists(os.path.join(INCLUDE, "dpacct", "dpacct.h")),
                    reason="needs a C compiler and the headers (DPACCT_INCLUDE)")
def test_struct_layouts_match_headers(tmp_path):
    src = tmp_path / "layout.c"
    exe = tmp_path / "layout"
    src.write_text(_c_program())
    subprocess.run([CC, "-std=c11", "-I", INCLUDE, str(src), "-o", str(exe)], check=True,
                   capture_output=True)
    got = dict(line.split(" ", 1) for line in
               subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines())
    assert got == _expected()


def test_enums_are_ints_and_fields_cover_the_structs():
    # every enum field is a C int; no ctypes structure has trailing fields missing:
    # the last field ends within the structure's alignment padding
    for st in _lib.STRUCTS.values():
        last_name = st._fields_[-1][0]
        last = getattr(st, last_name)
        assert ctypes.sizeof(st) - (last.offset + last.size) < ctypes.alignment(st)
