#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 60-framelink-e2e.sh under the J784S4 root-complex profile (MSI/MSI-X only, no INTx, no
# hot-plug: a link loss leaves framelink-host bound to a function whose config space reads
# all-ones), with the Tegra234 endpoint CPU-only, with its eDMA, and with JetPack 6.
# Without hot-plug framelink-host is not re-probed after the link returns: it must notice by
# itself that the endpoint stopped (link flap, function unbound and bound again), fail what was
# outstanding and enable the queue again (issue 8 item 2, host/live.c). "streaming works again"
# is asserted: no expected failure is left here.
# MPS is the root kernel's policy, not the board's: TI's SDK kernels leave 128 (the profile's
# default: the tegra234 and jetpack pairs), pci=pcie_bus_perf gives 256 (as the field report's
# link ran: the eDMA pair, the one whose DMA the payload size paces).
PAIRS="tegra234:j784s4 tegra234-edma:j784s4:256 jetpack:j784s4"
. /tests/60-framelink-e2e.sh
