#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The endpoint's V4L2 capture device (issue 29, the Orin half), fed by the host's V4L2 output
# device, both driven by tools nobody here wrote (Debian's arm64 v4l-utils and GStreamer,
# scripts/arm64-userland.sh), on pci-epc-loop profile tegra234-edma under the j784s4 root
# with 8 slots of 1 MiB (the boards' pair):
#  - v4l2-compliance on the capture node: 0 failed, 0 warnings; with its streaming tests
#    (-s, MMAP) and its DMABUF tests (-e: buffers exported by vivid, imported here) while
#    the host streams into its output device: 0 failed, 0 warnings;
#  - GStreamer on both ends: videotestsrc -> v4l2sink on the host, v4l2src -> filesink on
#    the endpoint: the 60 frames equal, byte for byte, what the same source writes to a
#    file (a control with one frame changed must differ);
#  - DMABUF import on the endpoint: v4l2-ctl --stream-dmabuf with buffers vivid allocated
#    and exported (the consumer's own buffers): every frame lands in them, byte for byte,
#    by DMA (dma_transfers +60) with no endpoint CPU copy (cpu_transfers +0);
#  - one receiver at a time on the endpoint: POST refused (EBUSY) while V4L2 streams,
#    STREAMON refused (EBUSY) while an app holds the ioctl path;
#  - the endpoint function unbound under a capture stream: v4l2-ctl ends, no hang.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

if [ ! -f /modules/framelink-host.ko ] || [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "v4l2 capture" "framelink modules not built"
	exit 0
fi
if ! command -v v4l2-compliance >/dev/null || ! command -v gst-launch-1.0 >/dev/null; then
	t_skip "v4l2 capture" "no v4l-utils / GStreamer in this VM (scripts/arm64-userland.sh)"
	exit 0
fi
export GST_REGISTRY=/tmp/gst-registry.bin

W=640
H=480
FRAME=614400	# 640x480 YUYV, both devices' default format
N=60
CAPS="video/x-raw,format=YUY2,width=$W,height=$H"

t_check "start: loop tegra234-edma, j784s4 root, 8 slots of 1 MiB" fl_start \
	"profile=tegra234-edma rc_profile=j784s4" "" slots=8 slot_size=1048576 dma_channels=2 || exit 0

VOUT=$(v4l_node "framelink framelink0")
VCAP=$(v4l_node "framelink framelink-ep0")
VIVID=$(v4l_node "vivid-000-vid-cap")
t_check "the endpoint has a V4L2 capture device (${VCAP:-none}), the host an output (${VOUT:-none})" \
	test -n "$VCAP" -a -n "$VOUT"
[ -n "$VCAP" ] && [ -n "$VOUT" ] || { fl_down; exit 0; }

compliance() {
	tail -n 1 $1 | sed 's/^/# /'
	grep -E "^\s+(fail|warn):" $1 | head -n 10 | sed 's/^/# /'
	grep -q "^Total for framelink-epf device $VCAP: [0-9]*, Succeeded: [0-9]*, Failed: 0, Warnings: 0$" $1
}
# host_send [COUNT]: the host streams into its output device in the background (pid $SX)
host_send() {
	v4l2-ctl -d $VOUT --stream-out-mmap --stream-count=${1:-1000000} >/tmp/hs.out 2>&1 &
	SX=$!
}
host_stop() {
	kill $SX 2>/dev/null
	wait $SX 2>/dev/null
	return 0
}

v4l2-compliance -d $VCAP >/tmp/comp.out 2>&1
t_check "v4l2-compliance $VCAP: 0 failed, 0 warnings" compliance /tmp/comp.out
host_send
v4l2-compliance -d $VCAP -s 10 >/tmp/comp-s.out 2>&1
t_check "v4l2-compliance -s (MMAP streaming, the host sending): 0 failed, 0 warnings" \
	compliance /tmp/comp-s.out
if [ -n "$VIVID" ]; then
	v4l2-ctl -d $VIVID -v width=$W,height=$H,pixelformat=YUYV
	v4l2-compliance -d $VCAP -s 10 -e $VIVID >/tmp/comp-e.out 2>&1
	t_check "v4l2-compliance -s -e $VIVID (DMABUF streaming): 0 failed, 0 warnings" \
		compliance /tmp/comp-e.out
else
	t_skip "v4l2-compliance DMABUF streaming" "no vivid-000 capture node"
fi
host_stop

# GStreamer on both ends
gst-launch-1.0 -q videotestsrc num-buffers=$N pattern=ball ! $CAPS ! \
	filesink location=/tmp/ref.raw >/dev/null 2>&1
gst-launch-1.0 -q v4l2src device=$VCAP io-mode=mmap num-buffers=$N ! $CAPS ! \
	filesink location=/tmp/ep.raw >/tmp/gst-ep.out 2>&1 &
RX=$!
sleep 1
gst-launch-1.0 -q videotestsrc num-buffers=$N pattern=ball ! $CAPS ! \
	v4l2sink device=$VOUT io-mode=mmap sync=false show-preroll-frame=false >/tmp/gst.out 2>&1
t_check "gstreamer host: videotestsrc -> v4l2sink ended" test $? -eq 0
wait_bounded $RX 30
t_check "gstreamer endpoint: v4l2src -> filesink ended" test $? -eq 0
sed 's/^/# /' /tmp/gst-ep.out | head -n 5
t_check "gstreamer: every byte of the $N frames as the host's source made them" \
	cmp /tmp/ep.raw /tmp/ref.raw
printf 'X' | dd of=/tmp/ref.raw bs=1 seek=$((30 * FRAME + 1000)) conv=notrunc 2>/dev/null
t_check "gstreamer control: a changed byte in frame 30 is found" \
	sh -c '! cmp -s /tmp/ep.raw /tmp/ref.raw'
rm -f /tmp/ep.raw /tmp/ref.raw

# DMABUF import: vivid's buffers (contiguous, vb2-dma-contig) are the consumer's own
if [ -n "$VIVID" ]; then
	d0=$(fl_stat $EDEV dma_transfers)
	c0=$(fl_stat $EDEV cpu_transfers)
	v4l2-ctl -d $VCAP --stream-dmabuf --export-device $VIVID --stream-count=$N \
		--stream-to=/tmp/ep.raw >/tmp/ctl-ep.out 2>&1 &
	RX=$!
	sleep 1
	gst-launch-1.0 -q videotestsrc num-buffers=$N pattern=ball ! $CAPS ! \
		v4l2sink device=$VOUT io-mode=mmap sync=false show-preroll-frame=false \
		>/tmp/gst.out 2>&1
	wait_bounded $RX 30
	t_check "dmabuf import: v4l2-ctl --stream-dmabuf ended" test $? -eq 0
	tail -n 2 /tmp/ctl-ep.out | sed 's/^/# /'
	gst-launch-1.0 -q videotestsrc num-buffers=$N pattern=ball ! $CAPS ! \
		filesink location=/tmp/ref.raw >/dev/null 2>&1
	t_check "dmabuf import: the $N frames in the consumer's buffers, byte for byte" \
		cmp /tmp/ep.raw /tmp/ref.raw
	d1=$(fl_stat $EDEV dma_transfers)
	c1=$(fl_stat $EDEV cpu_transfers)
	t_check "dmabuf import: by DMA, no endpoint CPU copy (dma +$((d1 - d0)), cpu +$((c1 - c0)))" \
		test "$((d1 - d0)) $((c1 - c0))" = "$N 0"
	rm -f /tmp/ep.raw /tmp/ref.raw
else
	t_skip "dmabuf import" "no vivid-000 capture node"
fi

# One receiver at a time on the endpoint
v4l2-ctl -d $VCAP --stream-mmap --stream-count=1000000 >/dev/null 2>&1 &
CX=$!
sleep 1
framelink recv -d $EDEV -n 1 -t 500 >/tmp/recv.out 2>&1
t_check "while V4L2 captures: the endpoint's POST fails with EBUSY" grep -qi "busy" /tmp/recv.out
sed 's/^/# /' /tmp/recv.out | head -n 2
kill $CX
wait $CX
framelink recv -d $EDEV -n 1 -t 4000 >/dev/null 2>&1 &
RX=$!
sleep 1
v4l2-ctl -d $VCAP --stream-mmap --stream-count=4 >/tmp/ctl.out 2>&1
t_check "while the ioctl path holds the endpoint: STREAMON refused with EBUSY" \
	grep -q "VIDIOC_STREAMON.*Device or resource busy" /tmp/ctl.out
wait $RX

# Unbind under a capture stream (nobody sends: its buffers stay posted)
v4l2-ctl -d $VCAP --stream-mmap --stream-count=1000000 >/tmp/rm.out 2>&1 &
CX=$!
sleep 1
t_check "unbind in flight: v4l2-ctl capturing" kill -0 $CX
t_check "unbind in flight: the endpoint function unbound under the stream" fl_unbind
wait_bounded $CX 30
rc=$?
tail -n 2 /tmp/rm.out | sed 's/^/# unbind v4l2-ctl: /'
t_check "unbind in flight: v4l2-ctl ended (exit $rc), not a hang" test $rc -ne 137
rmdir $FN
t_check "unload" sh -c "rmmod framelink_host && rmmod framelink_epf && rmmod pci_epc_loop"
