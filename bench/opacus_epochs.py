#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Per-epoch epsilon with dpacct.opacus.DpacctAccountant, and beside Opacus.

Part 1 (always): the README's DP-SGD run (60000 examples, batch 256, noise
1.1, delta 1e-5, 60 epochs = 14063 steps) fed step by step to
DpacctAccountant; get_epsilon(1e-5) after every epoch is timed (the goal
of issue 22: at most 5 ms per call on average; the first call also
evaluates the next 64 epochs in one pass, dpacct.epsilon_counts, and the
others are answered from that).  final_epsilon (the single-count query) is
checked against `dpacct dpsgd` when the command is found (build/dpacct or
$DPACCT_CLI), and the last per-epoch bracket must contain its value.

Part 2 (when Opacus' source and torch are importable): Opacus' own
PrivacyEngine trains a tiny model on random data for a few epochs with
DpacctAccountant as its accountant (registered as "dpacct"), and the
epsilon after each epoch is printed beside Opacus' RDP and PRV
accountants fed the same history.  Skipped, with a message, otherwise.

usage: python3 bench/opacus_epochs.py [--peers DIR] [--opacus SRC] [--epochs E]
  DIR: where bench/fetch-peers.sh put the sources (default
  $DPACCT_PEERS_DIR, else /tmp/dpacct-peers); SRC: Opacus' source
  (default $DPACCT_OPACUS, else DIR/opacus).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
if "DPACCT_LIBRARY" not in os.environ and os.path.exists(os.path.join(ROOT, "build", "libdpacct.so")):
    os.environ["DPACCT_LIBRARY"] = os.path.join(ROOT, "build", "libdpacct.so")

N, B, SIGMA, DELTA, EPOCHS = 60000, 256, 1.1, 1e-5, 60


def per_epoch(epochs):
    import dpacct
    from dpacct.opacus import DpacctAccountant
    q = B / N
    acc = DpacctAccountant()
    times, cpu, eps, done = [], [], [], 0
    for e in range(1, epochs + 1):
        target = dpacct.dpsgd_steps(epochs=e, dataset_size=N, batch_size=B)
        while done < target:
            acc.step(noise_multiplier=SIGMA, sample_rate=q)
            done += 1
        t, c = time.perf_counter(), time.process_time()
        eps.append(acc.get_epsilon(DELTA))
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return acc, eps, times, cpu


def cli_upper(steps):
    cli = os.environ.get("DPACCT_CLI", os.path.join(ROOT, "build", "dpacct"))
    if not os.path.exists(cli):
        return None
    out = subprocess.run([cli, "dpsgd", "--dataset-size", str(N), "--batch-size", str(B), "--steps",
                          str(steps), "--noise", str(SIGMA), "--delta", str(DELTA), "--json"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["epsilon_upper"]


def _opt_einsum_standin(torch):
    """Opacus imports opt_einsum.contract for its convolution samplers; where
    the package is missing (it is not in Debian) torch.einsum, the same
    contraction, stands in (the model here has no convolution)."""
    try:
        import opt_einsum.contract  # noqa: F401
    except ImportError:
        import types
        pkg, sub = types.ModuleType("opt_einsum"), types.ModuleType("opt_einsum.contract")
        pkg.__path__ = []
        pkg.contract = sub.contract = torch.einsum
        sys.modules.update({"opt_einsum": pkg, "opt_einsum.contract": sub})


def opacus_engine(path, epochs):
    if os.path.isdir(path) and path not in sys.path:
        sys.path.insert(0, path)
    import warnings
    warnings.simplefilter("ignore")  # Opacus' and torch's notices about secure RNG, hooks, log(0)
    try:
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        _opt_einsum_standin(torch)
        import opacus
        from opacus.accountants import RDPAccountant, PRVAccountant
    except Exception as e:  # torch or Opacus missing or broken
        print("opacus: skipped (%s: %s; Debian's torch 1.13 needs Opacus 1.4.0, see bench/README.md)"
              % (type(e).__name__, e))
        return
    import importlib
    import dpacct.opacus
    dop = importlib.reload(dpacct.opacus)  # imported before Opacus was on the path
    from opacus.accountants.accountant import IAccountant
    assert dop.HAVE_OPACUS and issubclass(dop.DpacctAccountant, IAccountant)
    DpacctAccountant, register = dop.DpacctAccountant, dop.register
    try:
        register()  # Opacus >= 1.5 has a registry
        engine = opacus.PrivacyEngine(accountant="dpacct")
        how = 'PrivacyEngine(accountant="dpacct")'
    except ImportError:
        engine = opacus.PrivacyEngine()
        engine.accountant = DpacctAccountant()
        how = "PrivacyEngine().accountant = DpacctAccountant()"
    torch.manual_seed(0)
    n, batch = 2000, 50
    data = TensorDataset(torch.randn(n, 10), torch.randint(0, 2, (n,)))
    model = torch.nn.Sequential(torch.nn.Linear(10, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    assert isinstance(engine.accountant, DpacctAccountant)
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=DataLoader(data, batch_size=batch),
        noise_multiplier=1.0, max_grad_norm=1.0)
    loss_fn = torch.nn.CrossEntropyLoss()
    print("opacus %s, torch %s: %s, %d examples, batch %d, noise 1.0, delta 1e-5"
          % (getattr(opacus, "__version__", "?"), torch.__version__, how, n, batch))
    print("%5s %7s %12s %12s %12s %12s" % ("epoch", "steps", "dpacct up", "dpacct low", "opacus rdp",
                                           "opacus prv"))
    for epoch in range(1, epochs + 1):
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        lo, up = engine.accountant.get_epsilon_bracket(1e-5)
        others = []
        for cls in (RDPAccountant, PRVAccountant):
            other = cls()
            other.history = list(engine.accountant.history)
            others.append(other.get_epsilon(1e-5))
        assert engine.get_epsilon(1e-5) == up
        print("%5d %7d %12.6f %12.6f %12.6f %12.6f" % (epoch, len(engine.accountant), up, lo, *others))
    state = engine.accountant.state_dict()
    fresh = DpacctAccountant()
    fresh.load_state_dict(state)
    assert fresh.get_epsilon(1e-5) == up
    print("history %r; state_dict round trip ok" % (engine.accountant.history,))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default=os.environ.get("DPACCT_PEERS_DIR", "/tmp/dpacct-peers"))
    ap.add_argument("--opacus", default=os.environ.get("DPACCT_OPACUS"),
                    help="Opacus' source (default PEERS/opacus)")
    ap.add_argument("--epochs", type=int, default=3, help="epochs of the Opacus run (part 2)")
    args = ap.parse_args()
    acc, eps, times, cpu = per_epoch(EPOCHS)
    print("DpacctAccountant, README run (N %d, B %d, noise %g, delta %g): get_epsilon after each of %d "
          "epochs" % (N, B, SIGMA, DELTA, EPOCHS))
    for e in (1, 2, 10, 30, 60):
        print("  epoch %2d: %7d steps  epsilon <= %.6f   (%.1f ms)" % (e, sum(h[2] for h in acc.history)
                                                                       if e == EPOCHS else
                                                                       __import__("dpacct").dpsgd_steps(
                                                                           epochs=e, dataset_size=N,
                                                                           batch_size=B),
                                                                       eps[e - 1], 1e3 * times[e - 1]))
    print("  per call: mean %.1f ms, median %.1f ms, max %.1f ms, total %.2f s (goal: mean <= 5 ms)"
          % (1e3 * statistics.mean(times), 1e3 * statistics.median(times), 1e3 * max(times), sum(times)))
    print("  CPU time of this process per call: mean %.1f ms (with the library's worker threads)"
          % (1e3 * statistics.mean(cpu)))
    lo, up = acc.get_epsilon_bracket(DELTA)
    final = acc.final_epsilon(DELTA)
    print("  get_epsilon after epoch %d: [%r, %r] (the per-epoch pass); final_epsilon: %r"
          % (EPOCHS, lo, up, final))
    ref = cli_upper(len(acc))
    if ref is not None:
        print("  dpacct dpsgd --steps %d: epsilon <= %r; final_epsilon: %r (%s)"
              % (len(acc), ref, final, "equal" if ref == final else "DIFFERENT"))
        if ref != final or not lo <= ref:
            sys.exit(1)
    opacus_engine(args.opacus or os.path.join(args.peers, "opacus"), args.epochs)


if __name__ == "__main__":
    main()
