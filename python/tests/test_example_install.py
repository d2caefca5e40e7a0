# SPDX-License-Identifier: GPL-3.0-or-later
"""examples/dpsgd.py runs; the package installs offline with pip into a venv; the
versions agree; the library bundled by the wheel (tests/wheel_test.sh builds and
installs the wheel itself) is the one the package loads first."""
import os
import re
import shutil
import subprocess
import sys

import pytest

import dpacct
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


def _version_in(path, pattern):
    with open(path) as f:
        m = re.search(pattern, f.read(), re.M)
    assert m, "no version in %s" % path
    return m.group(1)


def test_versions_agree():
    # the wheel (pyproject.toml), the binding alone (python/pyproject.toml), the
    # library (CMakeLists.txt) and the package carry one version
    toml = r'^version = "([^"]+)"'
    assert {_version_in(os.path.join(CHECKOUT, "pyproject.toml"), toml),
            _version_in(os.path.join(PYDIR, "pyproject.toml"), toml),
            _version_in(os.path.join(CHECKOUT, "CMakeLists.txt"), r"^project\(dpacct VERSION (\S+)"),
            dpacct.__version__} == {dpacct.__version__}


@needs_lib
def test_bundled_library_is_preferred(tmp_path):
    # the wheel's layout: dpacct/_libs/libdpacct.so.0 beside the package's modules;
    # without $DPACCT_LIBRARY it comes before any build tree or system library
    pkg = tmp_path / "site" / "dpacct"
    shutil.copytree(os.path.join(PYDIR, "dpacct"), str(pkg), ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "_libs").mkdir()
    (pkg / "_libs" / "libdpacct.so.0").symlink_to(os.path.realpath(LIBRARY))
    env = {k: v for k, v in os.environ.items() if k != "DPACCT_LIBRARY"}
    env.update(PYTHONPATH=str(tmp_path / "site"), DPACCT_WISDOM="off")
    code = "import dpacct; print(dpacct.library_path())"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(pkg / "_libs" / "libdpacct.so.0")
    # $DPACCT_LIBRARY still overrides it
    env["DPACCT_LIBRARY"] = os.path.realpath(LIBRARY)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == os.path.realpath(LIBRARY)
