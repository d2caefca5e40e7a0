#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""DP-SGD privacy with dpacct, notebook style (runs in a few seconds).

From a source checkout after the README's build:
    PYTHONPATH=python python3 examples/dpsgd.py
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import dpacct                      # noqa: E402
from dpacct import events as ev    # noqa: E402

# %% The run: MNIST-sized, 60000 examples, batch 256, 60 epochs, noise multiplier 1.1.
N, B, EPOCHS, SIGMA, DELTA = 60000, 256, 60, 1.1, 1e-5
steps = dpacct.dpsgd_steps(epochs=EPOCHS, dataset_size=N, batch_size=B)
print("steps = ceil(%d * %d / %d) = %d, sample rate q = %d/%d (Poisson sampling)" % (EPOCHS, N, B, steps, B, N))

# %% Its privacy: a certified bracket on epsilon (claim .upper).
r = dpacct.dpsgd_epsilon(noise_multiplier=SIGMA, delta=DELTA, dataset_size=N, batch_size=B, epochs=EPOCHS)
print(r)

# %% The same run as an event, and the same question to every certified method.
run = dpacct.dpsgd_event(SIGMA, dataset_size=N, batch_size=B, epochs=EPOCHS)
for method in ("pld", "rdp"):
    with dpacct.Accountant(run, method) as acc:
        print("%-4s" % method, repr(acc.epsilon(DELTA)))

# %% Noise for a target: the smallest noise multiplier with certified eps <= 1 (Opacus' name).
sigma = dpacct.get_noise_multiplier(target_epsilon=1.0, target_delta=DELTA, dataset_size=N,
                                    batch_size=B, epochs=EPOCHS)
print("noise multiplier for eps <= 1: %.6g" % sigma)

# %% How many epochs fit in eps = 8 at noise 1.1?
plan = dpacct.dpsgd_calibrate(target_epsilon=8, target_delta=DELTA, solve="epochs",
                              noise_multiplier=SIGMA, dataset_size=N, batch_size=B)
print("eps <= 8 allows %d steps = %d whole epochs (%.2f epochs)" % (plan.steps, plan.whole_epochs, plan.epochs))

# %% Fine-tuning after pre-training on the same data, plus a private count: compose.
finetune = dpacct.dpsgd_event(0.8, sample_rate=0.01, steps=500)
total = run + finetune + ev.laplace(10.0)
with dpacct.Accountant(total) as acc:
    print("pre-training + fine-tuning + a count:", repr(acc.epsilon(DELTA)))
    prof = acc.profile([1, 2, 4, 8])
    for e, up, lo in prof:
        print("  delta(eps=%g) <= %.3e" % (e, up))
