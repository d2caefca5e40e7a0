#!/usr/bin/env bash
# Install what dpacct needs from Debian 12, if it is missing (run as root).
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
pkgs="build-essential cmake pkg-config libfftw3-dev libgsl-dev libjansson-dev libcmocka-dev libmpfr-dev libcairo2-dev libsqlite3-dev libssl-dev libpq-dev postgresql help2man python3-pytest python3-numpy python3-venv python3-pip python3-setuptools python3-wheel patchelf poppler-utils fonts-dejavu-core libmicrohttpd-dev chromium curl"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi
