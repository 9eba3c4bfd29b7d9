#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: dependencies, the test kernel, the modules, and the demo in the VM.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/install-deps.sh
kdir=$(scripts/kernel.sh 6.12 | tail -n1)
scripts/build-modules.sh 6.12 "$kdir" >/dev/null
scripts/build-userspace.sh "$kdir"
exec scripts/vm-run.sh --tests tests/demo --log build/vm/demo.log
