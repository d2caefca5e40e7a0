# SPDX-License-Identifier: GPL-3.0-or-later
"""examples/train_epochs.py runs as its docstring says: the calibrated noise
meets the target after the last epoch, the logged epsilons increase, and the
last one is the certified bound a fresh accountant gives for that history."""
import os
import re
import subprocess
import sys

from dpacct.opacus import DpacctAccountant

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_train_epochs_example():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "train_epochs.py"), "3"],
                         env=env, capture_output=True, text=True, timeout=600, check=True).stdout
    sigma = float(re.search(r"noise multiplier ([0-9.]+) for epsilon <= 3 ", out).group(1))
    eps = [float(x) for x in re.findall(r"epoch +\d+ +steps +\d+ +epsilon <= ([0-9.]+)", out)]
    steps = [int(x) for x in re.findall(r"epoch +\d+ +steps +(\d+)", out)]
    assert steps == [235, 470, 705]
    assert len(eps) == 3 and eps[0] < eps[1] < eps[2] <= 3.0
    lo, up = (float(x) for x in re.search(r"final: epsilon in \[([0-9.]+), ([0-9.]+)\]", out).groups())
    assert lo <= up <= 3.0
    # the printed sigma is rounded to 4 decimals: a fresh accountant at the
    # printed value, 705 steps, brackets the same epsilon to that precision
    acc = DpacctAccountant()
    for _ in range(705):
        acc.step(noise_multiplier=sigma, sample_rate=256 / 60000)
    ref = acc.final_epsilon(1e-5)
    assert abs(ref - eps[2]) < 5e-3
