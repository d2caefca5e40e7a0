# SPDX-License-Identifier: GPL-3.0-or-later
"""docs/python.md's session and the README's Python example, replayed with doctest: the
output shown is real.  (The README's and docs/*.md's `$ command` blocks are replayed by
tests/docs_test.sh.)"""
import doctest
import os

import pytest

from conftest import CHECKOUT, needs_lib

DOC = os.path.join(CHECKOUT, "docs", "python.md")
README = os.path.join(CHECKOUT, "README.md")


@needs_lib
@pytest.mark.skipif(not os.path.exists(DOC), reason="docs/python.md not present (installed package)")
def test_python_md_session():
    res = doctest.testfile(DOC, module_relative=False, optionflags=doctest.ELLIPSIS, report=True,
                           verbose=False)
    assert res.attempted > 20
    assert res.failed == 0


@needs_lib
@pytest.mark.skipif(not os.path.exists(README), reason="README.md not present (installed package)")
def test_readme_python_example():
    res = doctest.testfile(README, module_relative=False, optionflags=doctest.ELLIPSIS, report=True,
                           verbose=False)
    assert res.attempted >= 8
    assert res.failed == 0
