# SPDX-License-Identifier: GPL-3.0-or-later
"""DP-SGD's samplers beyond Poisson (docs/training.md): random allocation
(balls in bins) through dpsgd_epsilon, the dpsgd leaf and the Opacus
accountant, each equal to the random_allocation leaf's accounting; shuffle's
two-pair bracket (upper: Gaussians of sensitivity 2 per epoch touched,
lower: the lower end of Chua et al.'s pair); partial epochs; bad input."""
import pickle

import pytest

import dpacct
from dpacct import events as ev
from dpacct.opacus import DpacctAccountant
from conftest import needs_lib

N, B, SIGMA, D = 60000, 256, 1.1, 1e-5


def _eps(event, **kw):
    with dpacct.Accountant(event, **kw) as acc:
        return acc.epsilon(D)


def test_random_allocation_event_dict():
    e = ev.random_allocation(ev.gaussian(1), 235, 1)
    assert e.to_dict() == {"random_allocation": {"steps": 235, "selected": 1, "event": {"gaussian": {"sigma": 1}}}}
    assert ev.from_dict(e.to_dict()) == e
    d = ev.dpsgd(N, B, SIGMA, epochs=60, sampling="random_allocation")
    assert d.neighboring == "add_remove" and d.to_dict()["dpsgd"]["sampling"] == "random_allocation"
    with pytest.raises(dpacct.InvalidSpecError, match="shuffling has no single pair"):
        ev.dpsgd(N, B, SIGMA, epochs=1, sampling="shuffle")


@needs_lib
def test_random_allocation_three_ways_agree():
    ra = ev.repeat(ev.random_allocation(ev.gaussian(SIGMA), 235, 1), 60).with_neighboring("add_remove")
    ref = _eps(ra)
    assert ref.certified and ref.lower <= ref.upper <= ref.lower + 1e-3 * max(1, ref.upper)
    r = dpacct.dpsgd_epsilon(noise_multiplier=SIGMA, delta=D, dataset_size=N, batch_size=B, epochs=60,
                             sampling="random_allocation")
    assert (r.upper, r.lower) == (ref.upper, ref.lower)
    leaf = _eps(ev.dpsgd(N, B, SIGMA, epochs=60, sampling="random_allocation"))
    assert (leaf.upper, leaf.lower) == (ref.upper, ref.lower)
    acc = DpacctAccountant(sampling="random_allocation")
    for _ in range(60 * 235):
        acc.step(noise_multiplier=SIGMA, sample_rate=1 / 235)
    assert acc.get_epsilon_bracket(D) == (ref.lower, ref.upper)
    # random allocation against Poisson at the same rate: within a few percent (RA is a little more private here)
    p = dpacct.dpsgd_epsilon(noise_multiplier=SIGMA, delta=D, dataset_size=N, batch_size=B, epochs=60)
    assert ref.upper < p.upper < 1.05 * ref.upper


@needs_lib
def test_random_allocation_partial_epoch_in_opacus():
    acc = DpacctAccountant(sampling="random_allocation")
    for _ in range(2 * 100 + 30):
        acc.step(noise_multiplier=1.0, sample_rate=0.01)
    r = acc.epsilon_result(D)
    up = _eps(ev.repeat(ev.random_allocation(ev.gaussian(1.0), 100, 1), 3).with_neighboring("add_remove"))
    lo = _eps(ev.repeat(ev.random_allocation(ev.gaussian(1.0), 100, 1), 2).with_neighboring("add_remove"))
    assert r.upper == up.upper and r.lower == lo.lower and "partial epoch" in r.note
    back = pickle.loads(pickle.dumps(acc))
    assert back.epsilon_result(D).upper == r.upper


@needs_lib
def test_shuffle_bracket():
    n, b, sigma, epochs = 2000, 100, 2.0, 5  # B divides N: the lower pair is random_allocation itself
    r = dpacct.dpsgd_epsilon(noise_multiplier=sigma, delta=D, dataset_size=n, batch_size=b, epochs=epochs,
                             sampling="shuffle")
    up = _eps(ev.repeat(ev.gaussian(sigma, sensitivity=2), epochs).with_neighboring("replace"))
    lo = _eps(ev.repeat(ev.random_allocation(ev.gaussian(sigma, sensitivity=2), 20, 1), epochs)
              .with_neighboring("add_remove"))
    assert r.upper == up.upper and r.lower == lo.lower and 0 < r.lower < r.upper
    assert "Chua" in r.note
    # the Opacus accountant for shuffled loaders gives the same bracket
    acc = DpacctAccountant(sampling="shuffle", dataset_size=n)
    for _ in range(epochs * 20):
        acc.step(noise_multiplier=sigma, sample_rate=b / n)
    assert acc.get_epsilon_bracket(D) == (r.lower, r.upper)
    # a partial batch: the lower pair leaves it out (Poisson at rate 19*105/2000 over 19 batches)
    q = dpacct.dpsgd_epsilon(noise_multiplier=sigma, delta=D, dataset_size=n, batch_size=105, epochs=epochs,
                             sampling="shuffle")
    lo2 = _eps(ev.repeat(ev.poisson(ev.random_allocation(ev.gaussian(sigma, sensitivity=2), 19, 1),
                                    19 * 105 / n), epochs).with_neighboring("add_remove"))
    assert q.lower == lo2.lower and q.lower <= q.upper


@needs_lib
def test_shuffle_calibration_meets_the_upper_end():
    plan = dpacct.dpsgd_calibrate(target_epsilon=20, target_delta=D, dataset_size=2000, batch_size=100, epochs=5,
                                  sampling="shuffle")
    assert plan.result.upper <= 20 and plan.result.lower <= plan.result.upper


def test_sampler_bad_input():
    with pytest.raises(dpacct.InvalidInputError, match="whole epochs"):
        dpacct.dpsgd_event(1.1, dataset_size=N, batch_size=B, epochs=1.5, sampling="random_allocation")
    with pytest.raises(dpacct.InvalidInputError, match="multiple of"):
        dpacct.dpsgd_event(1.1, dataset_size=N, batch_size=B, steps=100, sampling="random_allocation")
    with pytest.raises(dpacct.InvalidInputError, match="needs dataset_size"):
        dpacct.dpsgd_event(1.1, sample_rate=0.01, steps=100, sampling="shuffle")
    with pytest.raises(dpacct.InvalidInputError, match="dataset_size"):
        DpacctAccountant(sampling="shuffle")
    with pytest.raises(dpacct.InvalidInputError, match="sampling"):
        DpacctAccountant(sampling="bogus")
