#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 50-host-e2e.sh on pci-epc-loop's tegra234 profile (BAR0 only, 1 MiB fixed, MSI, no MSI-X).
PROFILE=tegra234
. /tests/50-host-e2e.sh
