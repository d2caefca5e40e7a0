# SPDX-License-Identifier: GPL-3.0-or-later
"""examples/dpsgd.py runs; the package installs offline with pip into a venv."""
import os
import subprocess
import sys

import pytest

from conftest import CHECKOUT, PYDIR, LIBRARY, needs_lib


@needs_lib
def test_dpsgd_example_runs():
    env = dict(os.environ, DPACCT_LIBRARY=os.path.realpath(LIBRARY), DPACCT_WISDOM="off")
    p = subprocess.run([sys.executable, os.path.join(CHECKOUT, "examples", "dpsgd.py")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "steps = ceil(60 * 60000 / 256) = 14063" in p.stdout
    assert "epsilon <= 2.3818 (certified upper bound), >= 2.3815" in p.stdout


def _venv_ok():
    import importlib.util
    # Debian's python3-venv, python3-pip and python3-setuptools (seen through --system-site-packages);
    # found, not imported: importing pip here would clash with setuptools' distutils shim
    return all(importlib.util.find_spec(m) is not None for m in ("venv", "ensurepip", "pip", "setuptools"))


@needs_lib
@pytest.mark.skipif(not _venv_ok(), reason="needs venv, pip and setuptools (python3-venv python3-pip)")
def test_pip_install_offline(tmp_path):
    venv_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv_dir)],
                   check=True, capture_output=True)
    py = str(venv_dir / "bin" / "python")
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONPATH="",
               DPACCT_LIBRARY=os.path.realpath(LIBRARY), DPACCT_WISDOM="off")
    # build in a copy: setuptools writes build/ and *.egg-info next to the sources
    src = tmp_path / "src"
    subprocess.run(["cp", "-r", PYDIR, str(src)], check=True)
    p = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", str(src)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    code = ("import dpacct, sys; from dpacct import events as ev; "
            "assert 'site-packages' in dpacct.__file__, dpacct.__file__; "
            "print(dpacct.Accountant(ev.gaussian(1.0) * 4).epsilon(1e-5).method)")
    p = subprocess.run([py, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "exact"
