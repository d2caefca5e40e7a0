# SPDX-License-Identifier: GPL-3.0-or-later
"""The tradeoff_curve leaf from Python (dpacct.events.tradeoff_curve;
docs/fdp.md §11.1) against the f-DP module's own symmetrized profile
(dpacct.tradeoff: lower_envelope, symmetrize, delta), and the f-DP
operations of docs/fdp.md §11.2 against closed forms (GDP Thm 2.14: G_mu for
groups of k is G_{k mu}; GDP eq 14 for C_p of f_{eps,delta})."""
import math
import random

import pytest

import dpacct
from dpacct import events as ev
from dpacct import tradeoff as tf
from conftest import needs_lib

# dpa_tf_delta's own outward rounding and the leaf's (docs/fdp.md §6, §11.1)
REF_REL = 1e-12


@needs_lib
def test_leaf_matches_symmetrized_envelope():
    rng = random.Random(7)
    for _ in range(10):
        n = rng.randint(3, 20)
        x = [0.0]
        for _ in range(n - 2):
            x.append(x[-1] + rng.random() * (1 - x[-1]) * 0.3)
        x.append(1.0)
        y = [1.0 - (rng.random() * 0.1 if rng.random() < 0.3 else 0.0)]
        for xi in x[1:-1]:
            y.append(min(y[-1], 1 - xi) * rng.random())
        y.append(0.0)
        ref = tf.lower_envelope(x, y).symmetrize()
        with dpacct.Accountant(ev.tradeoff_curve(x, y), method="pld") as acc:
            for eps in (0.0, 0.3, 1.0, 3.0):
                r = acc.delta(eps)
                d = ref.delta(eps, direction="qp")
                assert r.upper >= d * (1 - REF_REL) - 1e-16
                assert r.lower <= d * (1 + REF_REL) + 1e-16


@needs_lib
def test_leaf_refusals():
    with pytest.raises(dpacct.InvalidSpecError, match="point 1: beta"):
        dpacct.Accountant(ev.tradeoff_curve([0, 0.5], [1, 0.7]))
    with pytest.raises(dpacct.InvalidSpecError, match="beta must not increase"):
        dpacct.Accountant(ev.tradeoff_curve([0, 0.3], [0.5, 0.52]))
    with pytest.raises(dpacct.InvalidSpecError, match="same length"):
        ev.tradeoff_curve([0, 0.5], [1])
    with pytest.raises(dpacct.InvalidSpecError):
        ev.tradeoff_curve([0, float("nan")], [1, 0])


@needs_lib
def test_operations_closed_forms():
    # group privacy: G_1 for groups of 3 is G_3 (closed form kept)
    g = tf.gaussian(1.0).group(3)
    assert g.kind == "gaussian" and abs(g.params["mu"] - 3.0) <= 1e-12
    # C_p of f_{3, 0.1} with p = 0.2: the middle line 0.817073... - alpha (GDP eq 14)
    c = tf.approx(3.0, 0.1).subsample(0.2)
    icpt = 1 - 0.2 * (math.exp(3) - 1 + 0.2) / (math.exp(3) + 1)
    lo, hi = c.eval_bounds(0.25)
    assert lo <= icpt - 0.25 + 1e-15 and lo >= icpt - 0.25 - 1e-12
    # the inverse of an asymmetric curve: T(Q, P), its vertices swapped
    f = tf.from_points([0, 0.05, 0.3, 1], [0.9, 0.3, 0.05, 0])
    inv = f.inverse()
    assert abs(inv(0.05) - 0.3) <= 1e-15 and abs(inv(0.3) - 0.05) <= 1e-15 and inv(0.95) == 0
