#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A training loop that trains nothing: it logs the certified epsilon after
every epoch, as Opacus' PrivacyEngine would with dpacct's accountant, and
first calibrates the noise multiplier for a target epsilon.

From a source checkout after the README's build (or with the wheel
installed, docs/python.md):
    PYTHONPATH=python python3 examples/train_epochs.py [EPOCHS]
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import dpacct                                    # noqa: E402
from dpacct.opacus import DpacctAccountant       # noqa: E402

N, B, DELTA, TARGET_EPS = 60000, 256, 1e-5, 3.0  # MNIST-sized data, Poisson batches of 256 on average
EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 else 60
RATE = B / N
STEPS_PER_EPOCH = math.ceil(N / B)               # 235

# The smallest noise multiplier whose certified epsilon after EPOCHS epochs is
# at most TARGET_EPS (Opacus' get_noise_multiplier, certified).
sigma = dpacct.get_noise_multiplier(target_epsilon=TARGET_EPS, target_delta=DELTA,
                                    sample_rate=RATE, steps=EPOCHS * STEPS_PER_EPOCH)
print("noise multiplier %.4f for epsilon <= %g at delta %g after %d epochs" % (sigma, TARGET_EPS, DELTA, EPOCHS))

accountant = DpacctAccountant()
for epoch in range(1, EPOCHS + 1):
    for _ in range(STEPS_PER_EPOCH):
        # ... one optimizer step on a Poisson-sampled batch would run here ...
        accountant.step(noise_multiplier=sigma, sample_rate=RATE)
    eps = accountant.get_epsilon(DELTA)          # a certified upper bound
    print("epoch %2d  steps %5d  epsilon <= %.4f" % (epoch, len(accountant), eps))
lo, up = accountant.get_epsilon_bracket(DELTA)
print("final: epsilon in [%.5f, %.5f] (certified bracket) <= %g" % (lo, up, TARGET_EPS))
