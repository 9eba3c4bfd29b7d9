#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The endpoint's V4L2 capture device (issue 29, the Orin half), fed by the host's V4L2 output
# device, both driven by tools nobody here wrote (Debian's arm64 v4l-utils and GStreamer,
# scripts/arm64-userland.sh), on pci-epc-loop profile tegra234-edma under the j784s4 root
# with 8 slots of 1 MiB (the boards' pair):
#  - v4l2-compliance on the capture node: 0 failed, 0 warnings; with its streaming tests
#    (-s, MMAP) and its DMABUF tests (-e: buffers exported by vivid, imported here) while
#    the host streams into its output device: 0 failed, 0 warnings (but the one explained
#    warning, v4l2_compliance_ok);
#  - GStreamer on both ends: videotestsrc -> v4l2sink on the host, v4l2src -> filesink on
#    the endpoint: the 60 frames equal, byte for byte, what the same source writes to a
#    file (a control with one frame changed must differ);
#  - DMABUF import on the endpoint: v4l2-ctl --stream-dmabuf with buffers vivid allocated
#    and exported (the consumer's own buffers): every frame lands in them, byte for byte,
#    by DMA (dma_transfers +60) with no endpoint CPU copy (cpu_transfers +0);
#  - a frame longer than the capture buffer (the host's ioctl path: no format announced):
#    consumed unread, EMSGSIZE at the sender, the next frame that fits lands;
#  - the host's first announcement, of the capture device's own format, raises no event;
#  - the format comes from the sender (ABI 1.3): the host's format (GStreamer, GREY
#    320x240) becomes the capture device's only format, with a V4L2_EVENT_SOURCE_CHANGE (a
#    second stream of the same format raises none); buffers carry the host's timestamps
#    (GStreamer's PTS: frame k at k/30 s), the ioctl path's frames the endpoint's clock
#    instead (a control);
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

# The crossovers pinned at auto's defaults (write 64 KiB, read 4 KiB), as fl_up() does: the
# frames here go by DMA whatever the measurement at enable finds on a loaded machine (beside
# a CPU hog it found "CPU for every frame" at some enables, 2026-12-07; 74- measures auto)
t_check "start: loop tegra234-edma, j784s4 root, 8 slots of 1 MiB" fl_start \
	"profile=tegra234-edma rc_profile=j784s4" "" slots=8 slot_size=1048576 dma_channels=2 \
	crossover=65536 rd_crossover=4096 || exit 0

VOUT=$(v4l_node "framelink framelink0")
VCAP=$(v4l_node "framelink framelink-ep0")
VIVID=$(v4l_node "vivid-000-vid-cap")
t_check "the endpoint has a V4L2 capture device (${VCAP:-none}), the host an output (${VOUT:-none})" \
	test -n "$VCAP" -a -n "$VOUT"
[ -n "$VCAP" ] && [ -n "$VOUT" ] || { fl_down; exit 0; }

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
t_check "v4l2-compliance $VCAP: 0 failed, 0 warnings (QBUF-as-DONE excepted)" \
	v4l2_compliance_ok /tmp/comp.out framelink-epf $VCAP

# A frame longer than the buffer: 64x64 GREY buffers (4096 bytes), 1 MiB frames by ioctl
v4l2-ctl -d $VCAP -v width=64,height=64,pixelformat=GREY
v4l2-ctl -d $VCAP --stream-mmap --stream-count=1 --verbose >/tmp/big.out 2>&1 &
CX=$!
sleep 1
framelink send -d $HDEV -s 1M -n 2 >/tmp/big-send.out 2>&1
t_check "frame > V4L2 buffer: the sender's frames fail with EMSGSIZE" \
	grep -q "Message too long" /tmp/big-send.out
sed 's/^/# /' /tmp/big-send.out | head -n 3
framelink send -d $HDEV -s 4096 -n 1 >/tmp/big-send.out 2>&1
t_check "frame > V4L2 buffer: the next frame that fits is sent" test $? -eq 0
wait_bounded $CX 20
t_check "frame > V4L2 buffer: v4l2-ctl dequeued the fitting frame (4096 bytes)" \
	grep -q "bytesused: 4096" /tmp/big.out
t_check "the host carries capture times: buffers are TIMESTAMP_COPY" grep -q "ts-copy" /tmp/big.out
v4l2-ctl -d $VCAP -v width=$W,height=$H,pixelformat=YUYV

# The host's first announcement, of the format the capture device has already (640x480
# YUYV): no source-change event (GStreamer's v4l2src renegotiates on one, and make check's
# demo lost its stream when the first announcement raised it)
v4l2-ctl -d $VCAP --wait-for-event=source_change=0 >/tmp/ev.out 2>&1 &
EV=$!
framelink recv -d $EDEV -n 1 -t 20000 >/dev/null 2>&1 &
RX=$!
sleep 1
v4l2-ctl -d $VOUT --stream-out-mmap --stream-count=6 >/dev/null 2>&1
wait_bounded $RX 30
wait_bounded $EV 3
t_check "format: the first announcement, of the capture device's own format: no event" \
	sh -c '! grep -q source_change /tmp/ev.out'
t_check "format: ... and it was announced" \
	sh -c "dmesg | grep -q 'host format [0-9]*: YUYV .*640x480, 614400 bytes'"
host_send
v4l2-compliance -d $VCAP -s 10 >/tmp/comp-s.out 2>&1
t_check "v4l2-compliance -s (MMAP streaming, the host sending): 0 failed, 0 warnings (QBUF-as-DONE excepted)" \
	v4l2_compliance_ok /tmp/comp-s.out framelink-epf $VCAP
if [ -n "$VIVID" ]; then
	v4l2-ctl -d $VIVID -v width=$W,height=$H,pixelformat=YUYV
	v4l2-compliance -d $VCAP -s 10 -e $VIVID >/tmp/comp-e.out 2>&1
	t_check "v4l2-compliance -s -e $VIVID (DMABUF streaming): 0 failed, 0 warnings (QBUF-as-DONE excepted)" \
		v4l2_compliance_ok /tmp/comp-e.out framelink-epf $VCAP
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

# The format and the capture time come from the sender (ABI 1.3)
GREY_CAPS="video/x-raw,format=GRAY8,width=320,height=240,framerate=30/1"
# host_grey COUNT: COUNT frames of GStreamer's test source into the host's output device
host_grey() {
	gst-launch-1.0 -q videotestsrc num-buffers=$1 ! $GREY_CAPS ! v4l2sink device=$VOUT \
		io-mode=mmap sync=false show-preroll-frame=false >/tmp/gst.out 2>&1
}
# announced COUNT: COUNT GREY frames to the endpoint's ioctl path; 0 if a source-change
# event reached the capture device meanwhile
announced() {
	v4l2-ctl -d $VCAP --wait-for-event=source_change=0 >/tmp/ev.out 2>&1 &
	EV=$!
	framelink recv -d $EDEV -n $1 -t 20000 >/dev/null 2>&1 &
	RX=$!
	sleep 1
	host_grey $1
	wait_bounded $RX 30
	wait_bounded $EV 3
	grep -q "source_change" /tmp/ev.out
}
grey_fmt() {
	grep -q 'Width/Height *: 320/240' $1 && grep -q "'GREY'" $1 &&
		grep -q 'Size Image *: 76800' $1
}
t_check "format: V4L2_EVENT_SOURCE_CHANGE at the host's new format (GREY 320x240)" announced 4
v4l2-ctl -d $VCAP -V >/tmp/fmt.out 2>&1
t_check "format: the capture device's format is the host's (GREY 320x240, 76800 bytes)" \
	grey_fmt /tmp/fmt.out
sed -n 's/^/# /;/Pixel Format/p;/Width/p' /tmp/fmt.out
t_check "format: the capture device offers only the host's format" \
	sh -c "v4l2-ctl -d $VCAP --list-formats | grep -c '\[[0-9]*\]' | grep -qx 1"
t_check "format: the endpoint logged the announcement" \
	sh -c "dmesg | grep -q 'host format [0-9]*: GREY .*320x240, 76800 bytes'"
not_announced() { ! announced "$@"; }
t_check "format control: the same format again raises no event" not_announced 2
# capture times: GStreamer's PTS of frame k is k/30 s, far from the endpoint's clock;
# its buffer pool logs each dequeued buffer's timestamp
ep_gst_ts() {
	GST_DEBUG=v4l2bufferpool:6 GST_DEBUG_NO_COLOR=1 gst-launch-1.0 v4l2src device=$VCAP \
		num-buffers=8 ! fakesink >/tmp/gst-ep.out 2>&1 &
	CX=$!
	sleep 2
}
ep_gst_ts
host_grey 8
wait_bounded $CX 30
grep -o "dequeued buffer .*seq:3 .*, ts [0-9:.]*" /tmp/gst-ep.out | sed 's/^.*seq:/# seq:/'
t_check "timestamps: the host's capture time (frame 3 at 0.1 s)" \
	grep -q "dequeued buffer .*seq:3 .*, ts 0:00:00.100000000," /tmp/gst-ep.out
ep_gst_ts
framelink send -d $HDEV -s 76800 -n 8 >/dev/null 2>&1
wait_bounded $CX 30
grep -o "dequeued buffer .*seq:3 .*, ts [0-9:.]*" /tmp/gst-ep.out | sed 's/^.*seq:/# seq:/'
t_check "timestamps control: ioctl-path frames carry the endpoint's clock" \
	sh -c "grep -q 'dequeued buffer .*seq:3 .*, ts ' /tmp/gst-ep.out &&
		! grep -q 'dequeued buffer .*seq:3 .*, ts 0:00:00.1' /tmp/gst-ep.out"

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
