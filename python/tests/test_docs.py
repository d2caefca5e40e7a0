# SPDX-License-Identifier: GPL-3.0-or-later
"""docs/python.md's session, replayed with doctest: the output shown is real."""
import doctest
import os

import pytest

from conftest import CHECKOUT, needs_lib

DOC = os.path.join(CHECKOUT, "docs", "python.md")


@needs_lib
@pytest.mark.skipif(not os.path.exists(DOC), reason="docs/python.md not present (installed package)")
def test_python_md_session():
    res = doctest.testfile(DOC, module_relative=False, optionflags=doctest.ELLIPSIS, report=True,
                           verbose=False)
    assert res.attempted > 20
    assert res.failed == 0
