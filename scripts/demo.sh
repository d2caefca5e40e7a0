#!/usr/bin/env bash
# Install what is missing, build dpacct (Release) and run the main job: the
# privacy of a DP-SGD training run (MNIST-like: 60000 examples, batch 256,
# 60 epochs = 14063 steps, noise multiplier 1.1, delta 1e-5).
# Each step says what it does; the build shows cmake's progress lines.
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
cd "$(dirname "$0")/.."
echo "== 1/4 checking the Debian packages dpacct needs (scripts/deps.sh; apt-get installs what is missing)"
bash scripts/deps.sh
echo "== 2/4 configuring a Release build in build/ (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
echo "== 3/4 building the library, the dpacct command and the tests (cmake --build build; about a minute on 2 cores the first time)"
cmake --build build -j"$(nproc)"
echo "== 4/4 the DP-SGD example with the command just built (build/dpacct, README.md's tour)"
echo
echo "\$ build/dpacct epsilon --delta 1e-5 examples/dpsgd.json"
build/dpacct epsilon --delta 1e-5 examples/dpsgd.json
echo
echo "\$ build/dpacct calibrate --epsilon 1 --delta 1e-5 examples/dpsgd-sigma.json"
build/dpacct calibrate --epsilon 1 --delta 1e-5 examples/dpsgd-sigma.json
