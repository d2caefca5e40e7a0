# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared fixtures: the library, the dpacct command beside it, the checkout."""
import json
import math
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(HERE)
CHECKOUT = os.path.dirname(PYDIR)
sys.path.insert(0, PYDIR)

import dpacct  # noqa: E402


def _library():
    try:
        return dpacct.load_library()
    except dpacct.LibraryNotFoundError:
        return None


LIBRARY = _library()
needs_lib = pytest.mark.skipif(LIBRARY is None, reason="libdpacct.so not found (set DPACCT_LIBRARY)")


def _cli_path():
    env = os.environ.get("DPACCT_CLI")
    if env:
        return env
    if LIBRARY and os.path.isabs(LIBRARY):
        cand = os.path.join(os.path.dirname(os.path.realpath(LIBRARY)), "dpacct")
        if os.path.exists(cand):
            return cand
    return shutil.which("dpacct")


CLI = _cli_path()
needs_cli = pytest.mark.skipif(CLI is None or LIBRARY is None,
                               reason="the dpacct command was not found (set DPACCT_CLI)")


def _decode(x):
    """The CLI's JSON numbers as doubles ("inf" -> inf)."""
    if x == "inf":
        return math.inf
    if x == "-inf":
        return -math.inf
    return x


def run_cli(*args):
    """Run `dpacct ARGS --json`; the parsed output with "inf" decoded."""
    env = dict(os.environ, DPACCT_WISDOM="off")
    p = subprocess.run([CLI] + [str(a) for a in args] + ["--json"], capture_output=True,
                       text=True, env=env, timeout=300)
    if p.returncode != 0:
        raise AssertionError("dpacct %s failed (%d): %s" % (" ".join(map(str, args)), p.returncode,
                                                              p.stderr))
    return json.loads(p.stdout, object_hook=lambda d: {k: _decode(v) for k, v in d.items()})


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(autouse=True)
def _no_wisdom(monkeypatch):
    monkeypatch.setenv("DPACCT_WISDOM", "off")
