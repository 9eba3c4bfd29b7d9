// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of fl_proto.h: ring index maths across the 32-bit wrap, the interrupt event
 * rule, and the validation of everything one side of the link reads from the other.
 */
#include <kunit/test.h>

#include "fl_proto.h"

static void fl_test_ring_used_wraps(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, fl_ring_used(5, 0), 5U);
	KUNIT_EXPECT_EQ(test, fl_ring_used(5, 0xfffffffeU), 7U);
	KUNIT_EXPECT_EQ(test, fl_ring_used(0, 0), 0U);
	KUNIT_EXPECT_EQ(test, fl_ring_slot(0xffffffffU, 64), 63U);
	KUNIT_EXPECT_EQ(test, fl_ring_slot(64, 64), 0U);
}

static void fl_test_ring_prod_ok(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, fl_ring_prod_ok(16, 0, 16));
	KUNIT_EXPECT_FALSE(test, fl_ring_prod_ok(17, 0, 16));
	/* A producer behind the consumer is a peer moving backwards. */
	KUNIT_EXPECT_FALSE(test, fl_ring_prod_ok(9, 10, 16));
	KUNIT_EXPECT_TRUE(test, fl_ring_prod_ok(3, 0xfffffff8U, 16));
	KUNIT_EXPECT_FALSE(test, fl_ring_prod_ok(9, 0xfffffff8U, 16));
}

static void fl_test_ring_size_ok(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, fl_ring_size_ok(0));
	KUNIT_EXPECT_FALSE(test, fl_ring_size_ok(1));
	KUNIT_EXPECT_TRUE(test, fl_ring_size_ok(2));
	KUNIT_EXPECT_FALSE(test, fl_ring_size_ok(48));
	KUNIT_EXPECT_TRUE(test, fl_ring_size_ok(FL_RING_MAX_ENTRIES));
	KUNIT_EXPECT_FALSE(test, fl_ring_size_ok(2 * FL_RING_MAX_ENTRIES));
}

static void fl_test_need_event(struct kunit *test)
{
	/* Armed at 10: publishing 10 (old 10, new 11) interrupts, 11..12 does not. */
	KUNIT_EXPECT_TRUE(test, fl_need_event(10, 11, 10));
	KUNIT_EXPECT_FALSE(test, fl_need_event(10, 12, 11));
	KUNIT_EXPECT_TRUE(test, fl_need_event(10, 14, 8));
	KUNIT_EXPECT_FALSE(test, fl_need_event(10, 10, 8));
	KUNIT_EXPECT_TRUE(test, fl_need_event(0xffffffffU, 1, 0xfffffffeU));
	KUNIT_EXPECT_FALSE(test, fl_need_event(5, 5, 5));
}

static struct fl_tx_desc fl_test_tx(u64 addr, u32 bytes, u32 flags)
{
	return (struct fl_tx_desc){
		.addr = cpu_to_le64(addr), .bytes = cpu_to_le32(bytes),
		.flags = cpu_to_le32(flags), .cookie = cpu_to_le64(0xc0ffee),
		.id = cpu_to_le32(3), .seq = cpu_to_le32(77),
	};
}

static void fl_test_tx_desc_parse(struct kunit *test)
{
	struct fl_desc d = { .id = 0xdead };
	struct fl_tx_desc raw;

	raw = fl_test_tx(0x80000000, 4096, FL_FRAME_EOF);
	KUNIT_ASSERT_EQ(test, fl_tx_desc_parse(&raw, 4096, FL_FRAME_FLAGS, &d), 0);
	KUNIT_EXPECT_EQ(test, d.addr, 0x80000000ULL);
	KUNIT_EXPECT_EQ(test, d.bytes, 4096U);
	KUNIT_EXPECT_EQ(test, d.flags, FL_FRAME_EOF);
	KUNIT_EXPECT_EQ(test, d.id, 3U);
	KUNIT_EXPECT_EQ(test, d.seq, 77U);
	KUNIT_EXPECT_EQ(test, d.cookie, 0xc0ffeeULL);

	d.id = 0xdead;
	raw = fl_test_tx(0x80000000, 4097, 0);
	KUNIT_EXPECT_EQ(test, fl_tx_desc_parse(&raw, 4096, FL_FRAME_FLAGS, &d), -EMSGSIZE);
	raw = fl_test_tx(0x80000000, 0, 0);
	KUNIT_EXPECT_EQ(test, fl_tx_desc_parse(&raw, 4096, FL_FRAME_FLAGS, &d), -EINVAL);
	raw = fl_test_tx(U64_MAX - 10, 64, 0);
	KUNIT_EXPECT_EQ(test, fl_tx_desc_parse(&raw, 4096, FL_FRAME_FLAGS, &d), -EINVAL);
	raw = fl_test_tx(0x80000000, 64, 1U << 7);
	KUNIT_EXPECT_EQ(test, fl_tx_desc_parse(&raw, 4096, FL_FRAME_FLAGS, &d), -EINVAL);
	/* the format flags only where FL_F_FORMAT was accepted */
	raw = fl_test_tx(0x80000000, 64, FL_FRAME_EOF | FL_FRAME_TSTAMP);
	KUNIT_EXPECT_EQ(test, fl_tx_desc_parse(&raw, 4096, FL_FRAME_FLAGS, &d), -EINVAL);
	raw = fl_test_tx(0x80000000, 64, FL_FRAME_FORMAT);
	KUNIT_EXPECT_EQ(test, fl_tx_desc_parse(&raw, 4096, FL_FRAME_FLAGS, &d), -EINVAL);
	/* A rejected descriptor leaves the output alone. */
	KUNIT_EXPECT_EQ(test, d.id, 0xdeadU);
	raw = fl_test_tx(0x80000000, 64, FL_FRAME_EOF | FL_FRAME_FMT_FLAGS);
	KUNIT_ASSERT_EQ(test, fl_tx_desc_parse(&raw, 4096, FL_FRAME_FLAGS | FL_FRAME_FMT_FLAGS,
					       &d), 0);
	KUNIT_EXPECT_EQ(test, d.flags, FL_FRAME_EOF | FL_FRAME_FMT_FLAGS);
}

static void fl_test_rx_desc_parse(struct kunit *test)
{
	struct fl_rx_desc raw = { .addr = cpu_to_le64(0x1000), .size = cpu_to_le32(512),
				  .id = cpu_to_le32(9) };
	struct fl_desc d;

	KUNIT_ASSERT_EQ(test, fl_rx_desc_parse(&raw, &d), 0);
	KUNIT_EXPECT_EQ(test, d.bytes, 512U);
	KUNIT_EXPECT_EQ(test, d.id, 9U);
	raw.size = 0;
	KUNIT_EXPECT_EQ(test, fl_rx_desc_parse(&raw, &d), -EINVAL);
	raw.size = cpu_to_le32(2);
	raw.addr = cpu_to_le64(U64_MAX);
	KUNIT_EXPECT_EQ(test, fl_rx_desc_parse(&raw, &d), -EINVAL);
}

static struct fl_bar_ctrl fl_test_ctrl(void)
{
	return (struct fl_bar_ctrl){
		.ctrl = cpu_to_le32(FL_CTRL_ENABLE), .cq_entries = cpu_to_le32(128),
		.cq_addr = cpu_to_le64(0x40001000), .features = cpu_to_le64(FL_F_CQ_EVENT),
		.irq_type = cpu_to_le32(FL_IRQ_MSI), .irq_vectors = cpu_to_le32(1),
	};
}

static void fl_test_ctrl_check(struct kunit *test)
{
	struct fl_bar_ctrl c = fl_test_ctrl();

	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 64, 64), 0);
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 64, 128), -EINVAL);
	c.cq_entries = cpu_to_le32(96);
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 32, 32), -EINVAL);
	c = fl_test_ctrl();
	c.cq_addr = cpu_to_le64(0x40001010);
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 64, 64), -EINVAL);
	c.cq_addr = cpu_to_le64(U64_MAX & ~63ULL);
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 64, 64), -EINVAL);
	c.cq_addr = 0;
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 64, 64), -EINVAL);
	c = fl_test_ctrl();
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_DMA, 64, 64), -EINVAL);
	c.irq_type = cpu_to_le32(FL_IRQ_MSIX + 1);
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 64, 64), -EINVAL);
}

static struct fl_bar_header fl_test_header(void)
{
	return (struct fl_bar_header){
		.magic = cpu_to_le32(FL_MAGIC), .abi_version = cpu_to_le32(FL_ABI_VERSION),
		.features = cpu_to_le64(FL_F_ALL), .bar_size = cpu_to_le32(FL_BAR_SIZE),
		.tx_ring_offset = cpu_to_le32(FL_BAR_RINGS_OFFSET), .tx_entries = cpu_to_le32(64),
		.rx_ring_offset = cpu_to_le32(FL_BAR_RINGS_OFFSET + 64 * 32),
		.rx_entries = cpu_to_le32(64), .max_frame = cpu_to_le32(SZ_8M),
		.ep_slots = cpu_to_le32(8),
	};
}

static void fl_test_header_check(struct kunit *test)
{
	struct fl_bar_header h = fl_test_header();

	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE), 0);
	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE / 2), -EINVAL);
	h.magic = cpu_to_le32(0x12345678);
	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE), -ENODEV);
	h = fl_test_header();
	h.abi_version = cpu_to_le32((FL_ABI_MAJOR + 1) << 16);
	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE), -EPROTONOSUPPORT);
	h = fl_test_header();
	h.rx_ring_offset = cpu_to_le32(FL_BAR_RINGS_OFFSET + 64 * 32 - 16);
	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE), -EINVAL);
	h = fl_test_header();
	h.tx_ring_offset = cpu_to_le32(FL_BAR_DOORBELL_OFFSET);
	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE), -EINVAL);
	h = fl_test_header();
	h.rx_ring_offset = cpu_to_le32(FL_BAR_SIZE - 16 * 32);
	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE), -EINVAL);
	h = fl_test_header();
	h.tx_entries = cpu_to_le32(100);
	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE), -EINVAL);
	h = fl_test_header();
	h.max_frame = 0;
	KUNIT_EXPECT_EQ(test, fl_header_check(&h, FL_BAR_SIZE), -EINVAL);
}

static void fl_test_cqe_check(struct kunit *test)
{
	struct fl_cqe c = { .id = cpu_to_le32(15), .kind = cpu_to_le16(FL_CQE_RX),
			    .status = cpu_to_le16(FL_ST_OK), .flags = cpu_to_le32(FL_FRAME_EOF) };

	KUNIT_EXPECT_EQ(test, fl_cqe_check(&c, 16), 0);
	KUNIT_EXPECT_EQ(test, fl_cqe_check(&c, 15), -EPROTO);
	c.kind = cpu_to_le16(7);
	KUNIT_EXPECT_EQ(test, fl_cqe_check(&c, 16), -EPROTO);
	c.kind = cpu_to_le16(FL_CQE_TX_DONE);
	c.status = cpu_to_le16(FL_ST_RESET + 1);
	KUNIT_EXPECT_EQ(test, fl_cqe_check(&c, 16), -EPROTO);
	c.status = cpu_to_le16(FL_ST_OK);
	c.flags = cpu_to_le32(1U << 9);
	KUNIT_EXPECT_EQ(test, fl_cqe_check(&c, 16), -EPROTO);
}

static void fl_test_status_errno(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, fl_status_errno(FL_ST_OK), 0);
	KUNIT_EXPECT_EQ(test, fl_status_errno(FL_ST_TOO_BIG), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, fl_status_errno(FL_ST_DMA), -EIO);
	KUNIT_EXPECT_EQ(test, fl_status_errno(FL_ST_BAD_DESC), -EPROTO);
	KUNIT_EXPECT_EQ(test, fl_status_errno(FL_ST_RESET), -ECANCELED);
}

/* ---- Reserved fields the endpoint reads (issue 8 item 14, wt-ep) ---- */
static void fl_test_ctrl_reserved(struct kunit *test)
{
	struct fl_bar_ctrl c = fl_test_ctrl();
	struct fl_bar_doorbell db = {};

	KUNIT_EXPECT_TRUE(test, fl_ctrl_reserved_ok(&c));
	c.reserved[ARRAY_SIZE(c.reserved) - 1] = cpu_to_le32(1);
	KUNIT_EXPECT_FALSE(test, fl_ctrl_reserved_ok(&c));
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 64, 64), -EINVAL);
	c = fl_test_ctrl();
	c.ctrl = cpu_to_le32(FL_CTRL_ENABLE | BIT(31));
	KUNIT_EXPECT_EQ(test, fl_ctrl_check(&c, FL_F_ALL, 64, 64), -EINVAL);

	KUNIT_EXPECT_TRUE(test, fl_doorbell_reserved_ok(&db));
	db.irq_ack = cpu_to_le32(7);	/* not reserved */
	KUNIT_EXPECT_TRUE(test, fl_doorbell_reserved_ok(&db));
	db.reserved[0] = cpu_to_le32(0x80000000);
	KUNIT_EXPECT_FALSE(test, fl_doorbell_reserved_ok(&db));
	db.reserved[0] = 0;
	/* the last word, whatever later minor versions take from the front */
	db.reserved[ARRAY_SIZE(db.reserved) - 1] = cpu_to_le32(1);
	KUNIT_EXPECT_FALSE(test, fl_doorbell_reserved_ok(&db));
}

/* ---- end of reserved-field tests ---- */

static struct kunit_case fl_proto_cases[] = {
	KUNIT_CASE(fl_test_ring_used_wraps),
	KUNIT_CASE(fl_test_ring_prod_ok),
	KUNIT_CASE(fl_test_ring_size_ok),
	KUNIT_CASE(fl_test_need_event),
	KUNIT_CASE(fl_test_tx_desc_parse),
	KUNIT_CASE(fl_test_rx_desc_parse),
	KUNIT_CASE(fl_test_ctrl_check),
	KUNIT_CASE(fl_test_header_check),
	KUNIT_CASE(fl_test_cqe_check),
	KUNIT_CASE(fl_test_status_errno),
	KUNIT_CASE(fl_test_ctrl_reserved),
	{}
};

static struct kunit_suite fl_proto_suite = {
	.name = "framelink_proto",
	.test_cases = fl_proto_cases,
};

kunit_test_suite(fl_proto_suite);

MODULE_DESCRIPTION("KUnit tests of framelink's ring maths and shared-memory validation");
MODULE_LICENSE("GPL");
