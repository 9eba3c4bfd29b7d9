// SPDX-License-Identifier: GPL-2.0
/*
 * kselftest: an exported endpoint slot (FL_IOC_EXPORT, issue 11) imported by a real DRM
 * driver, vgem. DRM_IOCTL_PRIME_FD_TO_HANDLE makes vgem call dma_buf_attach() and
 * dma_buf_map_attachment() with its own device, as a GPU driver does, so the import runs
 * framelink-epf's map_dma_buf for a device that is not the controller.
 *
 * What an import may be (drivers/framelink/epf/export.c): slots from the controller's pool
 * (the lab's pci-epc-loop always gives those) are refused to an importer that is not
 * dma-coherent with EOPNOTSUPP, and vgem's platform device is not dma-coherent on arm64.
 * tests/vm/75-epf-export.sh runs this twice: as the lab is (FL_VGEM_EXPECT=refused) and with
 * tests/modules/fl-coherent marking vgem dma-coherent (FL_VGEM_EXPECT=import). Without
 * FL_VGEM_EXPECT either outcome is accepted and the cases that need an import skip after a
 * refusal.
 *
 * How the importer's view is read: DRM refuses DRM_IOCTL_MODE_MAP_DUMB on an imported
 * object (drm_gem_dumb_map_offset(): EINVAL), so the view is the dma-buf vgem gives back for
 * the handle (DRM_IOCTL_PRIME_HANDLE_TO_FD, the import's own dma-buf) and its mmap(); should a
 * kernel allow MAP_DUMB, the card's mapping is used instead.
 *
 * Devices: FL_EP_DEV, FL_HOST_DEV as framelink_test; the vgem card is the /dev/dri/card*
 * whose DRM_IOCTL_VERSION name is "vgem" (FL_VGEM_CARD overrides).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/framelink.h>

/* From the kernel tree's include/uapi/drm (the Makefile adds the directory) */
#include "drm.h"
#include "drm_mode.h"
#include "vgem_drm.h"

#include "kselftest_harness.h"
#include "fl_kselftest.h"

/* The harness's own setjmp()/fork() wrapper trips -Wclobbered once inlined with these */
#pragma GCC diagnostic ignored "-Wclobbered"

#define FL_NO_VGEM	"no vgem DRM device (CONFIG_DRM_VGEM): no importer to test with"
#define FL_REFUSED	"import refused (EOPNOTSUPP): slots from the controller's pool, " \
			"vgem not dma-coherent (export.c); fl-coherent runs the import"
#define FL_BUFINFO	"/sys/kernel/debug/dma_buf/bufinfo"

/* ---- DRM ---- */

/* 0 when @fd is a DRM device whose driver is "vgem" */
static int drm_is_vgem(int fd)
{
	char name[32] = "";
	struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };

	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return -errno;
	return strcmp(name, "vgem") ? -ENODEV : 0;
}

/* Open the vgem card (FL_VGEM_CARD, else the /dev/dri/card* that is vgem); fd or -errno */
static int vgem_open(void)
{
	char path[300];
	struct dirent *de;
	DIR *d;
	int fd;

	if (getenv("FL_VGEM_CARD")) {
		fd = open(getenv("FL_VGEM_CARD"), O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (drm_is_vgem(fd)) {
			close(fd);
			return -ENODEV;
		}
		return fd;
	}
	d = opendir("/dev/dri");
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "card", 4))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", de->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!drm_is_vgem(fd)) {
			closedir(d);
			return fd;
		}
		close(fd);
	}
	closedir(d);
	return -ENOENT;
}

/* PRIME import of dma-buf @dfd into the DRM file @card; 0 or -errno */
static int vgem_import(int card, int dfd, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dfd };

	*handle = 0;
	if (ioctl(card, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p))
		return -errno;
	*handle = p.handle;
	return 0;
}

static int gem_close(int card, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return ioctl(card, DRM_IOCTL_GEM_CLOSE, &c) ? -errno : 0;
}

/*
 * The importer's CPU view of @handle, @size bytes, read-write: the card's own mapping when
 * DRM gives a fake offset for it (MAP_DUMB), else the dma-buf vgem hands back for the handle.
 * @vfd gets that dma-buf (-1 for the card's mapping). NULL and errno on failure.
 */
static uint8_t *vgem_view(int card, uint32_t handle, size_t size, int *vfd)
{
	struct drm_mode_map_dumb md = { .handle = handle };
	struct drm_prime_handle p = { .handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR };
	void *m;

	*vfd = -1;
	if (!ioctl(card, DRM_IOCTL_MODE_MAP_DUMB, &md)) {
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, card, md.offset);
		return m == MAP_FAILED ? NULL : m;
	}
	/* The DRM core's rule for imported objects (drm_gem_dumb_map_offset()) */
	if (errno != EINVAL)
		return NULL;
	if (ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		return NULL;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, p.fd, 0);
	if (m == MAP_FAILED) {
		close(p.fd);
		return NULL;
	}
	*vfd = p.fd;
	return m;
}

/* The dma-buf's file references (/proc/self/fdinfo "count:"), or -1 */
static long dmabuf_refs(int fd)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "count: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * The dma-buf with inode @ino in debugfs's bufinfo: -ENOENT when not listed (released),
 * -EACCES when bufinfo cannot be read, else the number of attached devices; @vgem counts
 * those named "vgem".
 */
static int bufinfo_attached(unsigned long ino, int *vgem)
{
	char line[256], exp[64], name[64];
	unsigned long size, flags, mode, count, i;
	int state = 0, n = -ENOENT;	/* 1: our buffer, 2: its attached devices */
	FILE *f = fopen(FL_BUFINFO, "r");

	*vgem = 0;
	if (!f)
		return -EACCES;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lu %lx %lx %lu %63s %lu %63s", &size, &flags, &mode, &count,
			   exp, &i, name) == 7) {
			state = i == ino;
			if (state)
				n = 0;
		} else if (state && !strcmp(line, "\tAttached Devices:\n")) {
			state = 2;
		} else if (state == 2 && line[0] == '\t') {
			n++;
			if (!strcmp(line, "\tvgem\n"))
				(*vgem)++;
		} else if (!strncmp(line, "Total", 5)) {
			state = 0;
		}
	}
	fclose(f);
	return n;
}

static unsigned long fd_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/*
 * FL_VGEM_EXPECT: "import" (1), "refused" (0), unset (-1, either; a refusal skips the cases
 * that need an import).
 */
static int fl_expect(void)
{
	const char *e = getenv("FL_VGEM_EXPECT");

	if (!e)
		return -1;
	return !strcmp(e, "import");
}

/* ---- the fixture ---- */

FIXTURE(vgem) {
	struct fl_end ep;
	struct fl_end host;
	int have_host;
	int card;
};

FIXTURE_SETUP(vgem)
{
	int ret;

	self->ep.fd = -1;
	self->host.fd = -1;
	self->card = -1;
	ret = fl_open(&self->ep, "FL_EP_DEV", "/dev/framelink-ep0");
	if (ret == -ENOENT)
		SKIP(return, "no framelink endpoint device on this machine");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(FL_ROLE_ENDPOINT, self->ep.info.role);
	ASSERT_GE(self->ep.info.nbufs, 2);
	self->have_host = fl_open(&self->host, "FL_HOST_DEV", "/dev/framelink0") == 0;
	if (!self->have_host)
		fl_close(&self->host);
	self->card = vgem_open();
	if (self->card == -ENOENT)
		SKIP(return, FL_NO_VGEM);
	ASSERT_LE(0, self->card);
}

FIXTURE_TEARDOWN(vgem)
{
	if (self->card >= 0)
		close(self->card);
	fl_close(&self->ep);
	fl_close(&self->host);
}

/*
 * Import @x's dma-buf into vgem; the outcome must be the expected one. 1: imported (@handle),
 * 0: refused as export.c says (checked: nothing left attached, no reference kept).
 */
static int fl_import_expected(struct __test_metadata *_metadata, int card,
			      struct fl_export *x, uint32_t *handle)
{
	long refs = dmabuf_refs(x->fd);
	int expect = fl_expect(), ret, nv, at;

	ret = vgem_import(card, x->fd, handle);
	if (ret == -EOPNOTSUPP && expect != 1) {
		EXPECT_EQ(refs, dmabuf_refs(x->fd));
		at = bufinfo_attached(fd_ino(x->fd), &nv);
		if (at != -EACCES)
			EXPECT_EQ(0, at);
		return 0;
	}
	if (expect == 0) {
		TH_LOG("import expected to be refused with EOPNOTSUPP, got %d (%s)", ret,
		       ret ? strerror(-ret) : "imported");
		return -1;
	}
	if (ret) {
		TH_LOG("vgem's import failed: %s", strerror(-ret));
		return -1;
	}
	if (*handle == 0) {
		TH_LOG("import gave handle 0");
		return -1;
	}
	return 1;
}

/*
 * The import's outcome is the expected one (FL_VGEM_EXPECT): refused with EOPNOTSUPP leaving
 * no attachment and no reference, or imported with vgem attached (checked by
 * fl_import_expected()). Without FL_VGEM_EXPECT, a refusal skips.
 */
TEST_F(vgem, import_outcome)
{
	struct fl_export x;
	uint32_t h;
	int r;
	int ret;

	ret = ep_export(&self->ep, 0, FL_EXPORT_RDWR, &x);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	ASSERT_EQ(0, ret);
	r = fl_import_expected(_metadata, self->card, &x, &h);
	ASSERT_LE(0, r);
	if (r == 0) {
		TH_LOG("refused as expected: EOPNOTSUPP, nothing attached");
		close(x.fd);
		if (fl_expect() < 0)
			SKIP(return, FL_REFUSED);
		return;
	}
	ASSERT_EQ(0, gem_close(self->card, h));
	close(x.fd);
}

/*
 * vgem imports the exported slot (attach + map with vgem's device, listed as attached in
 * bufinfo, a reference held) and its view reads the pattern written through the slot's mmap
 * while the slot is the app's; or, as the lab is, the import is refused with EOPNOTSUPP and
 * leaves nothing behind.
 */
TEST_F(vgem, import_reads_slot)
{
	uint32_t slot = 1, sz = self->ep.info.buf_size, h;
	long refs0, refs1;
	struct fl_export x;
	int vfd, at, nv;
	uint8_t *v;
	int ret;

	ret = ep_export(&self->ep, slot, FL_EXPORT_RDWR | FL_EXPORT_CLOEXEC, &x);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	ASSERT_EQ(0, ret);
	fill_random(fl_buf(&self->ep, slot), sz, 0x71);
	/* The CPU wrote through the slot mmap: end of CPU access before a device reads */
	ASSERT_EQ(0, dmabuf_sync(x.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE));
	refs0 = dmabuf_refs(x.fd);
	ASSERT_LT(0, refs0);
	ret = fl_import_expected(_metadata, self->card, &x, &h);
	ASSERT_LE(0, ret);
	if (!ret) {
		close(x.fd);
		SKIP(return, FL_REFUSED);
	}

	refs1 = dmabuf_refs(x.fd);
	EXPECT_LT(refs0, refs1) {
		TH_LOG("vgem keeps no reference on the dma-buf it imported");
	}
	at = bufinfo_attached(fd_ino(x.fd), &nv);
	if (at == -EACCES) {
		TH_LOG("%s not readable: attachment not checked", FL_BUFINFO);
	} else {
		EXPECT_EQ(1, at);
		EXPECT_EQ(1, nv) {
			TH_LOG("vgem's device is not attached to the dma-buf");
		}
	}
	v = vgem_view(self->card, h, sz, &vfd);
	ASSERT_NE(NULL, v) {
		TH_LOG("no CPU view of the import: %s", strerror(errno));
	}
	if (vfd >= 0) {
		/* vgem hands back the dma-buf it imported, not a copy */
		EXPECT_EQ(fd_ino(x.fd), fd_ino(vfd));
		ASSERT_EQ(0, dmabuf_sync(vfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ));
	}
	EXPECT_EQ(crc32_le(fl_buf(&self->ep, slot), sz), crc32_le(v, sz));
	/* Only this slot: its neighbour's content differs */
	EXPECT_NE(crc32_le(v, sz), crc32_le(fl_buf(&self->ep, slot - 1), sz));
	if (vfd >= 0) {
		ASSERT_EQ(0, dmabuf_sync(vfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ));
		close(vfd);
	}
	munmap(v, sz);
	ASSERT_EQ(0, gem_close(self->card, h));
	EXPECT_EQ(refs0, dmabuf_refs(x.fd));
	close(x.fd);
}

/* Written through the importer's view, read back through the slot's own mmap */
TEST_F(vgem, importer_writes_slot)
{
	uint32_t slot = 1, sz = self->ep.info.buf_size, h, crc;
	struct fl_export x;
	uint8_t *v;
	int vfd;
	int ret;

	ret = ep_export(&self->ep, slot, FL_EXPORT_RDWR, &x);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	ASSERT_EQ(0, ret);
	memset(fl_buf(&self->ep, slot), 0, sz);
	ASSERT_EQ(0, dmabuf_sync(x.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE));
	ret = fl_import_expected(_metadata, self->card, &x, &h);
	ASSERT_LE(0, ret);
	if (!ret) {
		close(x.fd);
		SKIP(return, FL_REFUSED);
	}
	v = vgem_view(self->card, h, sz, &vfd);
	ASSERT_NE(NULL, v);
	if (vfd >= 0)
		ASSERT_EQ(0, dmabuf_sync(vfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE));
	fill_random(v, sz, 0x72);
	crc = crc32_le(v, sz);
	if (vfd >= 0)
		ASSERT_EQ(0, dmabuf_sync(vfd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE));
	/* The app reads the slot: start of CPU access after the importer's */
	ASSERT_EQ(0, dmabuf_sync(x.fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ));
	EXPECT_EQ(crc, crc32_le(fl_buf(&self->ep, slot), sz));
	ASSERT_EQ(0, dmabuf_sync(x.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ));
	EXPECT_NE(crc, crc32_le(fl_buf(&self->ep, slot - 1), sz));
	munmap(v, sz);
	if (vfd >= 0)
		close(vfd);
	ASSERT_EQ(0, gem_close(self->card, h));
	close(x.fd);
}

/*
 * A host frame received into the imported slot reads back through the importer's view once
 * its completion is reaped (the import takes no ownership: the slot is posted as usual).
 */
TEST_F(vgem, host_frame_through_importer)
{
	uint32_t bytes = 65536, slot = 0, zero = 0, h, crc;
	struct fl_frame f = { .buf = 0, .flags = FL_FRAME_EOF, .cookie = 0x76e0 };
	struct fl_completion c;
	struct fl_export x;
	uint8_t *v;
	int vfd;
	int ret;

	if (!self->have_host)
		SKIP(return, "no framelink host device");
	if (bytes > self->ep.info.buf_size)
		bytes = self->ep.info.buf_size;
	if (bytes > self->host.info.buf_size)
		bytes = self->host.info.buf_size;
	ret = ep_export(&self->ep, slot, FL_EXPORT_RDWR, &x);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	ASSERT_EQ(0, ret);
	memset(fl_buf(&self->ep, slot), 0, bytes);
	ASSERT_EQ(0, dmabuf_sync(x.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE));
	ret = fl_import_expected(_metadata, self->card, &x, &h);
	ASSERT_LE(0, ret);
	if (!ret) {
		close(x.fd);
		SKIP(return, FL_REFUSED);
	}
	v = vgem_view(self->card, h, x.size, &vfd);
	ASSERT_NE(NULL, v);
	ASSERT_EQ(0, fl_post(&self->ep, &slot, 1, NULL));

	fill_random(fl_buf(&self->host, zero), bytes, 0x76);
	crc = crc32_le(fl_buf(&self->host, zero), bytes);
	f.bytes = bytes;
	ASSERT_EQ(0, fl_submit(&self->host, &f, 1, NULL));
	ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_RX, &c));
	ASSERT_EQ(0, c.status);
	ASSERT_EQ(slot, c.buf);
	ASSERT_EQ(bytes, c.bytes);
	ASSERT_EQ(0, dmabuf_sync(x.fd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ));
	EXPECT_EQ(crc, crc32_le(v, bytes));
	ASSERT_EQ(0, dmabuf_sync(x.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ));
	ASSERT_EQ(0, fl_reap_one(&self->host, FL_Q_TX, &c));
	ASSERT_EQ(0, c.status);
	munmap(v, x.size);
	if (vfd >= 0)
		close(vfd);
	ASSERT_EQ(0, gem_close(self->card, h));
	close(x.fd);
}

/*
 * The same dma-buf imported twice by one DRM file is one object: the same handle, no second
 * attachment; another DRM file imports it separately. One GEM_CLOSE per file ends each
 * import (a second one is EINVAL).
 */
TEST_F(vgem, import_twice_same_handle)
{
	uint32_t h1, h2, h3;
	struct fl_export x;
	long refs0, refs1;
	int card2, at, nv;
	int ret;

	ret = ep_export(&self->ep, 0, FL_EXPORT_RDWR, &x);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	ASSERT_EQ(0, ret);
	refs0 = dmabuf_refs(x.fd);
	ret = fl_import_expected(_metadata, self->card, &x, &h1);
	ASSERT_LE(0, ret);
	if (!ret) {
		close(x.fd);
		SKIP(return, FL_REFUSED);
	}
	refs1 = dmabuf_refs(x.fd);
	ASSERT_EQ(0, vgem_import(self->card, x.fd, &h2));
	EXPECT_EQ(h1, h2);
	EXPECT_EQ(refs1, dmabuf_refs(x.fd));
	at = bufinfo_attached(fd_ino(x.fd), &nv);
	if (at != -EACCES)
		EXPECT_EQ(1, nv);

	card2 = vgem_open();
	ASSERT_LE(0, card2);
	ASSERT_EQ(0, vgem_import(card2, x.fd, &h3));
	EXPECT_LT(refs1, dmabuf_refs(x.fd));
	at = bufinfo_attached(fd_ino(x.fd), &nv);
	if (at != -EACCES)
		EXPECT_EQ(2, nv);
	ASSERT_EQ(0, gem_close(card2, h3));
	close(card2);
	EXPECT_EQ(refs1, dmabuf_refs(x.fd));

	ASSERT_EQ(0, gem_close(self->card, h1));
	EXPECT_EQ(-EINVAL, gem_close(self->card, h2));
	EXPECT_EQ(refs0, dmabuf_refs(x.fd));
	at = bufinfo_attached(fd_ino(x.fd), &nv);
	if (at != -EACCES)
		EXPECT_EQ(0, at);
	close(x.fd);
}

/*
 * vgem's import keeps the dma-buf alive after the app closed its fd; GEM_CLOSE then releases
 * it: detached, unmapped, gone from bufinfo (and framelink-epf's reference dropped, which the
 * script sees when the module unloads).
 */
TEST_F(vgem, gem_close_releases)
{
	uint32_t slot = 1, sz = self->ep.info.buf_size, h;
	unsigned long ino;
	struct fl_export x;
	int at, nv;
	int ret;

	ret = ep_export(&self->ep, slot, FL_EXPORT_RDWR, &x);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	ASSERT_EQ(0, ret);
	ret = fl_import_expected(_metadata, self->card, &x, &h);
	ASSERT_LE(0, ret);
	if (!ret) {
		close(x.fd);
		SKIP(return, FL_REFUSED);
	}
	ino = fd_ino(x.fd);
	ASSERT_NE(0, ino);
	close(x.fd);
	at = bufinfo_attached(ino, &nv);
	if (at == -EACCES) {
		TH_LOG("%s not readable: the release is not checked", FL_BUFINFO);
	} else {
		EXPECT_EQ(1, at) {
			TH_LOG("the import does not keep the dma-buf (%d)", at);
		}
		EXPECT_EQ(1, nv);
	}
	ASSERT_EQ(0, gem_close(self->card, h));
	if (at != -EACCES) {
		EXPECT_EQ(-ENOENT, bufinfo_attached(ino, &nv)) {
			TH_LOG("the dma-buf outlives its last reference");
		}
	}
	/* The slot is the app's as before: its mapping still works */
	fl_buf(&self->ep, slot)[sz - 1] = 0x5a;
	EXPECT_EQ(0x5a, fl_buf(&self->ep, slot)[sz - 1]);
}

/*
 * tests/vm/75-epf-export.sh (FL_VGEM_UNBIND=1) unbinds the function and unloads the
 * controller while vgem holds the import (mapped for vgem's device) and the app holds only
 * the importer's view: export.c keeps the slot memory for good and logs it (the script
 * checks the line), the view's CPU mapping faults, sync and mmap() fail with ENODEV, a new
 * import by another DRM file fails with ENODEV, the old import stays attached until its
 * GEM_CLOSE, which then releases the dma-buf without a splat (the runner checks the log).
 */
TEST_F_TIMEOUT(vgem, unbind_while_imported, 150)
{
	uint32_t sz = self->ep.info.buf_size, h, h2;
	unsigned long ino;
	struct fl_export x;
	int vfd, card2, at, nv;
	uint8_t *v;
	int ret;

	if (!getenv("FL_VGEM_UNBIND"))
		SKIP(return, "run by 75-epf-export.sh (FL_VGEM_UNBIND=1)");
	ret = ep_export(&self->ep, 0, FL_EXPORT_RDWR, &x);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	ASSERT_EQ(0, ret);
	memset(fl_buf(&self->ep, 0), 0x5a, sz);
	ASSERT_EQ(0, dmabuf_sync(x.fd, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE));
	ret = fl_import_expected(_metadata, self->card, &x, &h);
	ASSERT_LE(0, ret);
	if (!ret) {
		close(x.fd);
		SKIP(return, FL_REFUSED);
	}
	v = vgem_view(self->card, h, sz, &vfd);
	ASSERT_NE(NULL, v);
	ASSERT_EQ(0, fl_access_faults(v));
	EXPECT_EQ(0x5a, v[sz - 1]);
	ino = fd_ino(x.fd);
	close(x.fd);
	fl_close(&self->ep);
	/* the script unloads framelink-host first: nothing of it may stay open */
	fl_close(&self->host);
	touch_file("FL_VGEM_READY");
	ASSERT_EQ(0, wait_file("FL_UNBIND_DONE"));

	EXPECT_EQ(1, fl_access_faults(v)) {
		TH_LOG("the importer's view still reads after the unbind");
	}
	if (vfd >= 0) {
		EXPECT_EQ(-ENODEV, dmabuf_sync(vfd, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ));
		EXPECT_EQ(MAP_FAILED, mmap(NULL, sz, PROT_READ, MAP_SHARED, vfd, 0));
		EXPECT_EQ(ENODEV, errno);
		/* A new import (another DRM file: a new attachment and mapping) is refused */
		card2 = vgem_open();
		ASSERT_LE(0, card2);
		EXPECT_EQ(-ENODEV, vgem_import(card2, vfd, &h2));
		close(card2);
	}
	/* The old import is still there: the device mapping that kept the slots */
	at = bufinfo_attached(ino, &nv);
	if (at != -EACCES) {
		EXPECT_EQ(1, at);
		EXPECT_EQ(1, nv);
	}
	munmap(v, sz);
	/* The script tries to unload framelink-epf now: it must be refused */
	touch_file("FL_VGEM_CHECKED");
	ASSERT_EQ(0, wait_file("FL_VGEM_RELEASE"));
	if (vfd >= 0)
		close(vfd);
	ASSERT_EQ(0, gem_close(self->card, h));
	if (at != -EACCES)
		EXPECT_EQ(-ENOENT, bufinfo_attached(ino, &nv));
}

/*
 * tests/vm/75-epf-export.sh (FL_VGEM_LATE=1) unbinds the function and removes it while this
 * holds a dma-buf nobody imported; then vgem imports it: export.c says a new import of a
 * dma-buf whose endpoint is gone fails with ENODEV, whatever the importer (run in the lab's
 * refusing configuration, where the pool check answered first with EOPNOTSUPP and printed
 * its debug line through the freed function's device).
 */
TEST_F_TIMEOUT(vgem, import_after_unbind, 150)
{
	struct fl_export x;
	uint32_t h;
	int ret;

	if (!getenv("FL_VGEM_LATE"))
		SKIP(return, "run by 75-epf-export.sh (FL_VGEM_LATE=1)");
	ret = ep_export(&self->ep, 0, FL_EXPORT_RDWR, &x);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	ASSERT_EQ(0, ret);
	fl_close(&self->ep);
	fl_close(&self->host);
	touch_file("FL_VGEM_READY");
	ASSERT_EQ(0, wait_file("FL_UNBIND_DONE"));
	ret = vgem_import(self->card, x.fd, &h);
	EXPECT_EQ(-ENODEV, ret) {
		TH_LOG("import after unbind: %s, not ENODEV", ret ? strerror(-ret) : "imported");
	}
	if (!ret)
		gem_close(self->card, h);
	EXPECT_EQ(1, dmabuf_refs(x.fd));
	close(x.fd);
}

/*
 * ---- DMA_BUF_IOCTL_SYNC honours the CPU's direction (issue 27 item 3.7; epf/export.c) ----
 *
 * The syncs are counted by the DMA API's tracepoints (events/dma/dma_sync_sg_for_cpu and
 * _for_device, 6.12), on vgem's device. They fire only where the DMA API syncs at all: on a
 * coherent importer (fl-coherent's vgem) only with DMA-API debug, which the test kernel has;
 * without it the case skips.
 */
#define FL_TRACE	"/sys/kernel/tracing"

static int trace_write(const char *file, const char *v)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), FL_TRACE "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, v, strlen(v)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Syncs of vgem's mappings for the CPU (@cpu) and for the device (@dev) since the last call */
static int trace_syncs(int *cpu, int *dev)
{
	char line[512];
	FILE *f = fopen(FL_TRACE "/trace", "r");

	*cpu = *dev = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, ": vgem dir="))
			continue;
		if (strstr(line, "dma_sync_sg_for_cpu:"))
			(*cpu)++;
		else if (strstr(line, "dma_sync_sg_for_device:"))
			(*dev)++;
	}
	fclose(f);
	return trace_write("trace", "");
}

/* One DMA_BUF_IOCTL_SYNC bracket with @rw (READ, WRITE or both); its syncs counted */
static int sync_bracket(int fd, uint64_t rw, int *cpu, int *dev)
{
	int ret = dmabuf_sync(fd, DMA_BUF_SYNC_START | rw);

	if (!ret)
		ret = dmabuf_sync(fd, DMA_BUF_SYNC_END | rw);
	return ret ? ret : trace_syncs(cpu, dev);
}

/*
 * Slot @slot exported and imported by vgem (@x, @h): 1; 0 refused as expected (@x closed);
 * -EOPNOTSUPP without dma-buf; another -errno on failure.
 */
static int export_to_vgem(struct __test_metadata *_metadata, struct _test_data_vgem *self,
			  uint32_t slot, struct fl_export *x, uint32_t *h)
{
	int ret = ep_export(&self->ep, slot, FL_EXPORT_RDWR | FL_EXPORT_CLOEXEC, x);

	if (ret)
		return ret;
	ret = fl_import_expected(_metadata, self->card, x, h);
	if (ret <= 0)
		close(x->fd);
	return ret < 0 ? -EIO : ret;
}

TEST_F(vgem, sync_honours_direction)
{
	int ret, cpu, dev;
	struct fl_export x;
	uint32_t h;

	ret = export_to_vgem(_metadata, self, 1, &x, &h);
	if (ret == -EOPNOTSUPP)
		SKIP(return, FL_NO_DMABUF);
	if (ret == 0)
		SKIP(return, FL_REFUSED);
	ASSERT_EQ(1, ret);
	if (access(FL_TRACE "/trace", F_OK))
		mount("nodev", FL_TRACE, "tracefs", 0, NULL);
	if (access(FL_TRACE "/events/dma/dma_sync_sg_for_cpu", F_OK)) {
		gem_close(self->card, h);
		close(x.fd);
		SKIP(return, "no DMA API tracepoints (events/dma: 6.12 on)");
	}
	/* another test (73-trace.sh) may have left tracing off */
	ASSERT_EQ(0, trace_write("tracing_on", "1"));
	ASSERT_EQ(0, trace_write("events/dma/dma_sync_sg_for_cpu/enable", "1"));
	ASSERT_EQ(0, trace_write("events/dma/dma_sync_sg_for_device/enable", "1"));
	ASSERT_EQ(0, trace_syncs(&cpu, &dev));
	/* both ways: vgem's one mapping synced for the CPU at begin and back at end */
	ASSERT_EQ(0, sync_bracket(x.fd, DMA_BUF_SYNC_RW, &cpu, &dev));
	if (cpu == 0 && dev == 0) {
		trace_write("events/dma/enable", "0");
		trace_write("tracing_on", "0");
		gem_close(self->card, h);
		close(x.fd);
		SKIP(return, "no sync of vgem's mapping to count (coherent, no DMA-API debug)");
	}
	EXPECT_EQ(1, cpu);
	EXPECT_EQ(1, dev);
	/* a CPU read: what the device wrote, nothing to hand back */
	ASSERT_EQ(0, sync_bracket(x.fd, DMA_BUF_SYNC_READ, &cpu, &dev));
	EXPECT_EQ(1, cpu);
	EXPECT_EQ(0, dev);
	/* a CPU write: nothing to fetch, the writes handed to the device at end */
	ASSERT_EQ(0, sync_bracket(x.fd, DMA_BUF_SYNC_WRITE, &cpu, &dev));
	EXPECT_EQ(0, cpu);
	EXPECT_EQ(1, dev);
	trace_write("events/dma/dma_sync_sg_for_cpu/enable", "0");
	trace_write("events/dma/dma_sync_sg_for_device/enable", "0");
	trace_write("tracing_on", "0");
	ASSERT_EQ(0, gem_close(self->card, h));
	close(x.fd);
}

/*
 * ---- implicit fences of host imports (issue 27 item 3.8; host/fence.c) ----
 *
 * vgem is the exporter here: a 4 KiB dumb buffer (one page: one DMA segment for the host's
 * PCI function) exported with DRM_IOCTL_PRIME_HANDLE_TO_FD and imported by framelink-host.
 * vgem's DRM_IOCTL_VGEM_FENCE_ATTACH puts a fence of a (simulated) GPU job on it: with
 * VGEM_FENCE_WRITE a write fence, and it refuses (EBUSY) while a fence the new one must
 * wait for is unsignalled: for a write, any fence, our read fence included. The fence
 * signals at DRM_IOCTL_VGEM_FENCE_SIGNAL (or after vgem's own 10 s timeout).
 * Run by tests/vm/76-camera.sh (-f vgemfence).
 */
#define FL_FENCE_PARAM	"/sys/module/framelink_host/parameters/import_fence_ms"
#define FL_FBUF		4096

FIXTURE(vgemfence) {
	struct fl_end ep;
	struct fl_end host;
	int card;
	uint32_t handle;	/* the vgem buffer */
	uint8_t *map;		/* its CPU view */
	int dfd;		/* its dma-buf */
	struct fl_import im;	/* the host's import of it */
	char param[32];		/* import_fence_ms as found, restored at teardown */
};

FIXTURE_SETUP(vgemfence)
{
	struct drm_mode_create_dumb cd = { .height = 1, .width = FL_FBUF / 4, .bpp = 32 };
	struct drm_prime_handle p = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_mode_map_dumb md = { 0 };
	FILE *f;
	int ret;

	self->ep.fd = -1;
	self->host.fd = -1;
	self->card = -1;
	self->dfd = -1;
	self->map = MAP_FAILED;
	self->param[0] = 0;
	self->im.buf = UINT32_MAX;
	ret = fl_open(&self->host, "FL_HOST_DEV", "/dev/framelink0");
	if (ret == -ENOENT)
		SKIP(return, "no framelink host device");
	ASSERT_EQ(0, ret);
	if (!(self->host.info.caps & FL_CAP_IMPORT))
		SKIP(return, "the host has no FL_CAP_IMPORT (caps %#x)", self->host.info.caps);
	ASSERT_EQ(0, fl_open(&self->ep, "FL_EP_DEV", "/dev/framelink-ep0"));
	self->card = vgem_open();
	if (self->card == -ENOENT)
		SKIP(return, FL_NO_VGEM);
	ASSERT_LE(0, self->card);
	ASSERT_EQ(0, ioctl(self->card, DRM_IOCTL_MODE_CREATE_DUMB, &cd));
	ASSERT_EQ(FL_FBUF, cd.size);
	self->handle = cd.handle;
	md.handle = cd.handle;
	ASSERT_EQ(0, ioctl(self->card, DRM_IOCTL_MODE_MAP_DUMB, &md));
	self->map = mmap(NULL, FL_FBUF, PROT_READ | PROT_WRITE, MAP_SHARED, self->card,
			 md.offset);
	ASSERT_NE(MAP_FAILED, self->map);
	p.handle = cd.handle;
	ASSERT_EQ(0, ioctl(self->card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p));
	self->dfd = p.fd;
	self->im = (struct fl_import){ .fd = self->dfd };
	ASSERT_EQ(0, ioctl(self->host.fd, FL_IOC_IMPORT, &self->im));
	ASSERT_EQ(1, self->im.segments);
	ASSERT_EQ(FL_FBUF, self->im.size);
	/* restored at teardown; its absence fails the one case that sets it */
	f = fopen(FL_FENCE_PARAM, "r");
	if (f) {
		if (!fgets(self->param, sizeof(self->param), f))
			self->param[0] = 0;
		fclose(f);
	}
}

static int fence_param_set(const char *v)
{
	FILE *f = fopen(FL_FENCE_PARAM, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(v, f) < 0 ? -EIO : 0;
	return fclose(f) ? -errno : ret;
}

FIXTURE_TEARDOWN(vgemfence)
{
	if (self->param[0])
		fence_param_set(self->param);
	if (self->im.buf != UINT32_MAX && self->host.fd >= 0) {
		struct fl_import u = { .buf = self->im.buf };

		ioctl(self->host.fd, FL_IOC_UNIMPORT, &u);
	}
	if (self->dfd >= 0)
		close(self->dfd);
	if (self->map != MAP_FAILED)
		munmap(self->map, FL_FBUF);
	if (self->card >= 0)
		close(self->card);
	fl_close(&self->ep);
	fl_close(&self->host);
}

/* A fence of a vgem "job" on the buffer, write or read; its id, or -errno */
static int vgem_fence(int card, uint32_t handle, int write)
{
	struct drm_vgem_fence_attach a = { .handle = handle,
					   .flags = write ? VGEM_FENCE_WRITE : 0 };

	if (ioctl(card, DRM_IOCTL_VGEM_FENCE_ATTACH, &a))
		return -errno;
	return a.out_fence;
}

static int vgem_signal(int card, uint32_t fence)
{
	struct drm_vgem_fence_signal s = { .fence = fence };

	return ioctl(card, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s) ? -errno : 0;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int fence_submit(struct _test_data_vgemfence *self, uint32_t *done)
{
	struct fl_frame f = { .buf = self->im.buf, .bytes = FL_FBUF, .flags = FL_FRAME_EOF,
			      .cookie = 0xfe9ce };

	return fl_submit(&self->host, &f, 1, done);
}

/* The frame arrives in endpoint slot @slot (posted already) with @crc; the host's TX is done */
static void fence_frame_arrives(struct __test_metadata *_metadata,
				struct _test_data_vgemfence *self, uint32_t crc)
{
	struct fl_completion c;

	ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_RX, &c));
	ASSERT_EQ(0, c.status);
	ASSERT_EQ(FL_FBUF, c.bytes);
	ASSERT_EQ(0xfe9ce, c.cookie);
	EXPECT_EQ(crc, crc32_le(fl_buf(&self->ep, c.buf), FL_FBUF));
	ASSERT_EQ(0, fl_reap_one(&self->host, FL_Q_TX, &c));
	EXPECT_EQ(0, c.status);
	EXPECT_EQ(self->im.buf, c.buf);
}

/*
 * A writer still at work: SUBMIT waits for its write fence and the endpoint gets what the
 * writer wrote before it signalled, not what was there at SUBMIT.
 */
TEST_F(vgemfence, submit_waits_for_write_fence)
{
	uint32_t slot = 0, crc_new, done = 9;
	double t0, waited;
	int fence, st;
	pid_t pid;

	fill_random(self->map, FL_FBUF, 11);
	fill_random(fl_buf(&self->ep, slot), FL_FBUF, 12);
	crc_new = crc32_le(fl_buf(&self->ep, slot), FL_FBUF);
	memset(fl_buf(&self->ep, slot), 0, FL_FBUF);
	ASSERT_EQ(0, fl_post(&self->ep, &slot, 1, NULL));
	fence = vgem_fence(self->card, self->handle, 1);
	ASSERT_LE(0, fence);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* the "GPU": finishes its frame 300 ms later, then signals */
		usleep(300000);
		fill_random(self->map, FL_FBUF, 12);
		_exit(vgem_signal(self->card, fence) ? 1 : 0);
	}
	t0 = now_ms();
	EXPECT_EQ(0, fence_submit(self, &done));
	waited = now_ms() - t0;
	EXPECT_EQ(1, done);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, st);
	TH_LOG("SUBMIT returned after %.0f ms (the writer signalled after 300 ms)", waited);
	EXPECT_LE(250, waited);
	fence_frame_arrives(_metadata, self, crc_new);
}

/*
 * A writer that does not signal within import_fence_ms: ETIMEDOUT, nothing queued from that
 * frame on (an own buffer's frame before it in the batch is sent); once it signals, SUBMIT
 * sends.
 */
TEST_F(vgemfence, write_fence_timeout_etimedout)
{
	struct fl_frame f[2] = {
		{ .buf = 0, .bytes = 64, .flags = FL_FRAME_EOF, .cookie = 1 },
		{ .buf = self->im.buf, .bytes = FL_FBUF, .flags = FL_FRAME_EOF, .cookie = 0xfe9ce },
	};
	struct fl_stats s0, s1;
	struct fl_completion c;
	uint32_t slot = 0, crc, done = 9;
	double t0, waited;
	int fence;

	fill_random(self->map, FL_FBUF, 21);
	crc = crc32_le(self->map, FL_FBUF);
	ASSERT_EQ(0, fence_param_set("200"));
	fence = vgem_fence(self->card, self->handle, 1);
	ASSERT_LE(0, fence);
	ASSERT_EQ(0, ioctl(self->host.fd, FL_IOC_STATS, &s0));
	t0 = now_ms();
	EXPECT_EQ(-ETIMEDOUT, fl_submit(&self->host, f, 2, &done));
	waited = now_ms() - t0;
	TH_LOG("ETIMEDOUT after %.0f ms (import_fence_ms 200)", waited);
	EXPECT_EQ(1, done);
	EXPECT_LE(190, waited);
	EXPECT_GE(5000, waited);
	/* the own buffer's frame went; the import's did not */
	ASSERT_EQ(0, fl_post(&self->ep, &slot, 1, NULL));
	ASSERT_EQ(0, fl_reap_one(&self->ep, FL_Q_RX, &c));
	EXPECT_EQ(1, c.cookie);
	slot = c.buf;
	ASSERT_EQ(0, fl_reap_one(&self->host, FL_Q_TX, &c));
	EXPECT_EQ(0, c.buf);
	ASSERT_EQ(0, ioctl(self->host.fd, FL_IOC_STATS, &s1));
	EXPECT_EQ(s0.tx_imported, s1.tx_imported);
	/* signalled: the same frame goes */
	ASSERT_EQ(0, vgem_signal(self->card, fence));
	ASSERT_EQ(0, fl_post(&self->ep, &slot, 1, NULL));
	EXPECT_EQ(0, fence_submit(self, &done));
	fence_frame_arrives(_metadata, self, crc);
}

/* Lines of the dma-buf @ino's section of bufinfo that name a fence of framelink-host */
static int bufinfo_our_fences(unsigned long ino, int *unsignalled)
{
	char line[256], exp[64], name[64];
	unsigned long size, flags, mode, count, i;
	FILE *f = fopen(FL_BUFINFO, "r");
	int ours = 0, n = 0;

	*unsignalled = 0;
	if (!f)
		return -EACCES;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lu %lx %lx %lu %63s %lu %63s", &size, &flags, &mode, &count,
			   exp, &i, name) == 7)
			ours = i == ino;
		else if (ours && strstr(line, "framelink-host")) {
			n++;
			if (strstr(line, "unsignalled"))
				(*unsignalled)++;
		}
	}
	fclose(f);
	return n;
}

/*
 * While the endpoint may read the frame (in flight: no slot posted), the buffer carries our
 * read fence: a writer (vgem's write fence) is refused, poll(POLLOUT) is not ready; after
 * the completion both go; after UNIMPORT no fence of ours is left on the buffer.
 */
TEST_F(vgemfence, endpoint_read_holds_writers)
{
	struct pollfd pfd = { .fd = self->dfd, .events = POLLOUT };
	uint32_t slot = 0, crc, done = 9;
	struct fl_import u;
	int fence, n, un;

	fill_random(self->map, FL_FBUF, 31);
	crc = crc32_le(self->map, FL_FBUF);
	ASSERT_EQ(0, fence_submit(self, &done));
	usleep(100000);
	EXPECT_EQ(-EBUSY, vgem_fence(self->card, self->handle, 1));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	n = bufinfo_our_fences(fd_ino(self->dfd), &un);
	if (n != -EACCES) {
		EXPECT_EQ(1, n);
		EXPECT_EQ(1, un);
	}
	/* a reader does not wait for a reader */
	fence = vgem_fence(self->card, self->handle, 0);
	EXPECT_LE(0, fence);
	if (fence >= 0)
		EXPECT_EQ(0, vgem_signal(self->card, fence));
	memset(fl_buf(&self->ep, slot), 0, FL_FBUF);
	ASSERT_EQ(0, fl_post(&self->ep, &slot, 1, NULL));
	fence_frame_arrives(_metadata, self, crc);
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	fence = vgem_fence(self->card, self->handle, 1);
	ASSERT_LE(0, fence);
	EXPECT_EQ(0, vgem_signal(self->card, fence));
	u = (struct fl_import){ .buf = self->im.buf };
	ASSERT_EQ(0, ioctl(self->host.fd, FL_IOC_UNIMPORT, &u));
	self->im.buf = UINT32_MAX;
	n = bufinfo_our_fences(fd_ino(self->dfd), &un);
	if (n != -EACCES)
		EXPECT_EQ(0, n);
}

TEST_HARNESS_MAIN
