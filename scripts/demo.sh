#!/usr/bin/env bash
# Install what is missing, build dpacct (Release) and run the main job: the
# privacy of a DP-SGD training run (MNIST-like: 60000 examples, batch 256,
# 60 epochs = 14063 steps, noise multiplier 1.1, delta 1e-5).
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "\$ dpacct epsilon --delta 1e-5 examples/dpsgd.json"
./build/dpacct epsilon --delta 1e-5 examples/dpsgd.json
echo
echo "\$ dpacct calibrate --epsilon 1 --delta 1e-5 examples/dpsgd-sigma.json"
./build/dpacct calibrate --epsilon 1 --delta 1e-5 examples/dpsgd-sigma.json
