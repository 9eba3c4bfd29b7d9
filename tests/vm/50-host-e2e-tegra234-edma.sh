#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 50-host-e2e.sh on pci-epc-loop's tegra234-edma profile (BAR0 only, 1 MiB fixed, MSI, no MSI-X,
# PERST# lifecycle, 2 read + 4 write eDMA channels in dmaengine). The suite injects DMA errors,
# so it needs dmaengine channels: plain tegra234 has none (its CPU path runs in 40-epf-e2e.sh
# and 60-framelink-e2e.sh).
PROFILE=tegra234-edma
. /tests/50-host-e2e.sh
