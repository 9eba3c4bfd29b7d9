/* SPDX-License-Identifier: GPL-2.0 */
/*
 * framelink: our declaration of NVIDIA's Tegra PCIe eDMA library interface,
 * the "old" API of JetPack 6 (module tegra-pcie-edma.ko of linux-nv-oot,
 * header include/linux/tegra-pcie-edma.h there).
 *
 * Written by the framelink authors from the facts collected in
 * Documentation/pci-epc-loop.rst ("jetpack" profile, eDMA library): same
 * function names, types, field names and enum values, so that a backend
 * written for the JetPack 6 library builds against this header and runs on
 * pci-epc-loop unchanged. Sources read (no code taken from them):
 * sradcliffe-nottinghamspirk/linux-nv-oot include/linux/tegra-pcie-edma.h
 * @0d836004 and drivers/pci/controller/tegra-pcie-edma.c @0221df94.
 *
 * The implementation in the lab is drivers/pci-epc-loop/nvedma.c; it is
 * active only on a pci-epc-loop started with profile=jetpack.
 *
 * Copyright (C) 2026 The framelink authors
 */
#ifndef _FRAMELINK_TEGRA_PCIE_EDMA_H
#define _FRAMELINK_TEGRA_PCIE_EDMA_H

#include <linux/types.h>

struct device;
struct device_node;

/* Channels of the Tegra234 eDMA engine the library drives */
#define DMA_RD_CHNL_NUM		2
#define DMA_WR_CHNL_NUM		4

/* Bytes per descriptor slot the library reserves (remote mode sizing) */
#define EDMA_DESC_SZ		32
/* Usual descriptors per channel; any count must be a power of two */
#define NUM_EDMA_DESC		4096

/**
 * enum edma_xfer_status - result of a submit or of a completion callback
 * @EDMA_XFER_SUCCESS: done (also what the library reports for transfers
 *	across a link down: the hardware drops them silently)
 * @EDMA_XFER_FAIL_INVAL_INPUTS: bad arguments or channel not configured
 * @EDMA_XFER_FAIL_NOMEM: the channel's descriptor ring has no room
 * @EDMA_XFER_FAIL_TIMEOUT: a SYNC submit's wait ran out
 * @EDMA_XFER_ABORT: hardware abort or tegra_pcie_edma_stop()
 * @EDMA_XFER_DEINIT: tegra_pcie_edma_deinit() ran with the transfer pending
 */
enum edma_xfer_status {
	EDMA_XFER_SUCCESS = 0,
	EDMA_XFER_FAIL_INVAL_INPUTS,
	EDMA_XFER_FAIL_NOMEM,
	EDMA_XFER_FAIL_TIMEOUT,
	EDMA_XFER_ABORT,
	EDMA_XFER_DEINIT,
};

/**
 * enum edma_xfer_type - direction of a transfer
 * @EDMA_XFER_WRITE: local (endpoint) memory to the remote (host) side;
 *	desc.src is local, desc.dst a PCI address
 * @EDMA_XFER_READ: remote to local; desc.src is a PCI address
 */
enum edma_xfer_type {
	EDMA_XFER_WRITE = 0,
	EDMA_XFER_READ,
};

/**
 * enum edma_chan_type - how a channel reports completion
 * @EDMA_CHAN_XFER_SYNC: submit sleeps until done (bounded), no callback
 * @EDMA_CHAN_XFER_ASYNC: submit returns at once, one callback per submit
 */
enum edma_chan_type {
	EDMA_CHAN_XFER_SYNC = 0,
	EDMA_CHAN_XFER_ASYNC,
};

/*
 * NVIDIA's header names these types with typedefs of anonymous enums. New
 * typedefs are not kernel style, so the same spellings are provided as
 * macros: code written against the library compiles unchanged.
 */
#define edma_xfer_status_t	enum edma_xfer_status
#define edma_xfer_type_t	enum edma_xfer_type
#define edma_chan_type_t	enum edma_chan_type

struct tegra_pcie_edma_desc;

/*
 * Completion callback of an ASYNC channel: @desc is always NULL. Called from
 * the library's completion thread (may sleep), or from the caller of
 * tegra_pcie_edma_stop() / tegra_pcie_edma_deinit() for ABORT / DEINIT.
 */
typedef void (edma_complete_t)(void *priv, edma_xfer_status_t status,
			       struct tegra_pcie_edma_desc *desc);

/**
 * struct pcie_tegra_edma_remote_info - the remote endpoint's engine (RP side)
 * @msi_irq: Linux irq of the MSI the remote engine raises
 * @msi_data: MSI data to program into the remote engine
 * @msi_addr: MSI address to program into the remote engine
 * @dma_phy_base: physical base of the remote engine registers (BAR4)
 * @dma_size: size of that register range
 * @dev: the PCI device, for devm and logging
 *
 * Remote mode is declared for source compatibility; the lab implements only
 * the local engine and refuses initialize with a remote.
 */
struct pcie_tegra_edma_remote_info {
	u32 msi_irq;
	u16 msi_data;
	u64 msi_addr;
	phys_addr_t dma_phy_base;
	u32 dma_size;
	struct device *dev;
};

/**
 * struct tegra_pcie_edma_chans_info - configuration of one channel
 * @ch_type: SYNC or ASYNC
 * @num_descriptors: ring size: 0 leaves the channel unused, else a power
 *	of two > 1; a channel holds at most num_descriptors - 1 in flight
 * @desc_phy_base: remote mode only: descriptor memory (one more than
 *	@num_descriptors)
 * @desc_iova: remote mode only: bus address of @desc_phy_base
 */
struct tegra_pcie_edma_chans_info {
	edma_chan_type_t ch_type;
	u32 num_descriptors;
	phys_addr_t desc_phy_base;
	dma_addr_t desc_iova;
};

/**
 * struct tegra_pcie_edma_init_info - argument of tegra_pcie_edma_initialize()
 * @tx: write channels
 * @rx: read channels
 * @np: device node of the PCIe controller whose engine is used (local mode)
 * @edma_remote: NULL for the local engine
 */
struct tegra_pcie_edma_init_info {
	struct tegra_pcie_edma_chans_info tx[DMA_WR_CHNL_NUM];
	struct tegra_pcie_edma_chans_info rx[DMA_RD_CHNL_NUM];
	struct device_node *np;
	struct pcie_tegra_edma_remote_info *edma_remote;
};

/**
 * struct tegra_pcie_edma_desc - one element of a transfer
 * @src: source address (local DMA address or PCI address, see the type)
 * @dst: destination address
 * @sz: bytes
 */
struct tegra_pcie_edma_desc {
	dma_addr_t src;
	dma_addr_t dst;
	u32 sz;
};

/**
 * struct tegra_pcie_edma_xfer_info - argument of tegra_pcie_edma_submit_xfer()
 * @type: EDMA_XFER_WRITE or EDMA_XFER_READ
 * @channel_num: channel of that direction
 * @desc: @nents elements, copied by the call (the array may be reused)
 * @nents: number of elements, at most the ring size - 1
 * @complete: callback (required on ASYNC channels, unused on SYNC ones)
 * @priv: first argument of @complete
 */
struct tegra_pcie_edma_xfer_info {
	edma_xfer_type_t type;
	u32 channel_num;
	struct tegra_pcie_edma_desc *desc;
	u32 nents;
	edma_complete_t *complete;
	void *priv;
};

void *tegra_pcie_edma_initialize(struct tegra_pcie_edma_init_info *info);
edma_xfer_status_t
tegra_pcie_edma_submit_xfer(void *cookie,
			    struct tegra_pcie_edma_xfer_info *tx_info);
bool tegra_pcie_edma_stop(void *cookie);
void tegra_pcie_edma_deinit(void *cookie);

#endif /* _FRAMELINK_TEGRA_PCIE_EDMA_H */
