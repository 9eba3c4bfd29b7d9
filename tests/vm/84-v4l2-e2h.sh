#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The other direction through V4L2 (issue 29): the endpoint's V4L2 output device sends frames
# into the host's V4L2 capture device, both driven by tools nobody here wrote (Debian's arm64
# v4l-utils and GStreamer), on pci-epc-loop profile tegra234-edma under the j784s4 root with
# 8 slots of 1 MiB (the boards' pair):
#  - v4l2-compliance on both new nodes: 0 failed, 0 warnings; with its streaming tests (-s,
#    MMAP) on each while the other end streams into or out of it, and DMABUF streaming (-e:
#    buffers vivid exported) on the host's capture device;
#  - GStreamer on both ends: videotestsrc -> v4l2sink on the endpoint, v4l2src -> filesink
#    on the host: the 60 frames equal, byte for byte, what the same source writes to a file
#    (a control with one frame changed must differ); rx_v4l2 grows by the frames (the host
#    CPU copied none), the endpoint moved them by DMA (dma_transfers +60, cpu +0);
#  - frame rate and drops as v4l2-ctl reports them on the host's capture device (90 frames
#    from the endpoint's GStreamer, no gap in the sequence numbers);
#  - a host app slower than the endpoint's sender: the last frame, still queued at the
#    sender's EOS, arrives (the endpoint output's STREAMOFF drains);
#  - the host's output device ends its stream beside a capture stream: no queue reset;
#  - both ways at once: the host's camera pipeline into its output device, the endpoint's
#    v4l2src on its capture device -> v4l2sink on its output device (the Orin's processing
#    stage), the host's v4l2src on its capture device: 60 frames there and back, every byte;
#  - a queue reset by the other direction (the host's output device stops with frames the
#    endpoint never took) does not end the host's capture stream: its buffers are posted
#    again (rx_reposted), no buffer comes back with the error flag, every later frame lands;
#  - the ioctl path and V4L2 never at once: the endpoint's SUBMIT (send) fails with EBUSY while
#    its output device streams, the host's POST (recv) while its capture device streams;
#  - capture STREAMOFF on the host with buffers posted: one queue reset gives them back,
#    v4l2-ctl ends, the ioctl path works afterwards;
#  - the endpoint function unbound under an output stream: v4l2-ctl ends, no hang.
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh

if [ ! -f /modules/framelink-host.ko ] || [ ! -f /modules/framelink-epf.ko ]; then
	t_skip "v4l2 e2h" "framelink modules not built"
	exit 0
fi
if ! command -v v4l2-compliance >/dev/null || ! command -v gst-launch-1.0 >/dev/null; then
	t_skip "v4l2 e2h" "no v4l-utils / GStreamer in this VM (scripts/arm64-userland.sh)"
	exit 0
fi
export GST_REGISTRY=/tmp/gst-registry.bin

W=640
H=480
FRAME=614400	# 640x480 YUYV, every device's default format
N=60
CAPS="video/x-raw,format=YUY2,width=$W,height=$H"

# The crossovers pinned at auto's defaults (write 64 KiB, read 4 KiB), as fl_up() does: the
# frames here go by DMA whatever the measurement at enable finds on a loaded machine (beside
# a CPU hog it found "CPU for every frame" at some enables, 2026-12-07; 74- measures auto)
t_check "start: loop tegra234-edma, j784s4 root, 8 slots of 1 MiB" fl_start \
	"profile=tegra234-edma rc_profile=j784s4" "" slots=8 slot_size=1048576 dma_channels=2 \
	crossover=65536 rd_crossover=4096 || exit 0

VEOUT=$(v4l_node "framelink framelink-ep0 output")
VHCAP=$(v4l_node "framelink framelink0 capture")
VOUT=$(v4l_node "framelink framelink0")
VCAP=$(v4l_node "framelink framelink-ep0")
VIVID=$(v4l_node "vivid-000-vid-cap")
t_check "the endpoint has a V4L2 output device (${VEOUT:-none}), the host a capture (${VHCAP:-none})" \
	test -n "$VEOUT" -a -n "$VHCAP"
[ -n "$VEOUT" ] && [ -n "$VHCAP" ] || { fl_down; exit 0; }

# bg NAME CMD...: CMD in the background, its pid in $BG
bg() {
	"$@" >/tmp/bg.out 2>&1 &
	BG=$!
	sleep 1
}
bg_stop() {
	kill $BG 2>/dev/null
	wait $BG 2>/dev/null
	return 0
}

# ep_send_wait WHAT N: the endpoint's GStreamer sends N frames through its output device,
# then the host's receiver $RX ends (bounded): $rc its exit, $got rx_v4l2 since $r0
ep_send_wait() {
	gst-launch-1.0 -q videotestsrc num-buffers=$2 ! $CAPS ! v4l2sink device=$VEOUT \
		io-mode=mmap sync=false show-preroll-frame=false >/tmp/gst.out 2>&1
	t_check "$1: the endpoint's GStreamer sent $2 frames and ended" test $? -eq 0
	wait_bounded $RX 30
	rc=$?
	got=$(($(fl_stat $HDEV rx_v4l2) - r0))
}

v4l2-compliance -d $VEOUT >/tmp/comp.out 2>&1
t_check "v4l2-compliance $VEOUT (endpoint output): 0 failed, 0 warnings (QBUF-as-DONE excepted)" \
	v4l2_compliance_ok /tmp/comp.out framelink-epf $VEOUT
v4l2-compliance -d $VHCAP >/tmp/comp.out 2>&1
t_check "v4l2-compliance $VHCAP (host capture): 0 failed, 0 warnings (QBUF-as-DONE excepted)" \
	v4l2_compliance_ok /tmp/comp.out framelink-host $VHCAP

# streaming: the host's ioctl path receives what the endpoint's output device sends
bg framelink recv -d $HDEV -n 0 -t 60000
v4l2-compliance -d $VEOUT -s 10 >/tmp/comp-s.out 2>&1
bg_stop
t_check "v4l2-compliance -s $VEOUT (MMAP streaming, the host receiving): 0 failed, 0 warnings (QBUF-as-DONE excepted)" \
	v4l2_compliance_ok /tmp/comp-s.out framelink-epf $VEOUT
# ... and the host's capture device takes what the endpoint's output device sends
bg v4l2-ctl -d $VEOUT --stream-out-mmap --stream-count=1000000
v4l2-compliance -d $VHCAP -s 10 >/tmp/comp-s.out 2>&1
t_check "v4l2-compliance -s $VHCAP (MMAP streaming, the endpoint sending): 0 failed, 0 warnings (QBUF-as-DONE excepted)" \
	v4l2_compliance_ok /tmp/comp-s.out framelink-host $VHCAP
if [ -n "$VIVID" ]; then
	v4l2-ctl -d $VIVID -v width=$W,height=$H,pixelformat=YUYV
	v4l2-compliance -d $VHCAP -s 10 -e $VIVID >/tmp/comp-e.out 2>&1
	t_check "v4l2-compliance -s -e $VIVID $VHCAP (DMABUF streaming): 0 failed, 0 warnings (QBUF-as-DONE excepted)" \
		v4l2_compliance_ok /tmp/comp-e.out framelink-host $VHCAP
else
	t_skip "v4l2-compliance DMABUF streaming" "no vivid-000 capture node"
fi
bg_stop

# GStreamer: endpoint -> host
gst-launch-1.0 -q videotestsrc num-buffers=$N pattern=ball ! $CAPS ! \
	filesink location=/tmp/ref.raw >/dev/null 2>&1
r0=$(fl_stat $HDEV rx_v4l2)
d0=$(fl_stat $EDEV dma_transfers)
c0=$(fl_stat $EDEV cpu_transfers)
gst-launch-1.0 -q v4l2src device=$VHCAP io-mode=mmap num-buffers=$N ! $CAPS ! \
	filesink location=/tmp/host.raw >/tmp/gst-host.out 2>&1 &
RX=$!
sleep 1
gst-launch-1.0 -q videotestsrc num-buffers=$N pattern=ball ! $CAPS ! \
	v4l2sink device=$VEOUT io-mode=mmap sync=false show-preroll-frame=false >/tmp/gst.out 2>&1
t_check "gstreamer endpoint: videotestsrc -> v4l2sink ended" test $? -eq 0
sed 's/^/# /' /tmp/gst.out | head -n 5
wait_bounded $RX 30
t_check "gstreamer host: v4l2src -> filesink ended" test $? -eq 0
sed 's/^/# /' /tmp/gst-host.out | head -n 5
t_check "gstreamer e2h: every byte of the $N frames as the endpoint's source made them" \
	cmp /tmp/host.raw /tmp/ref.raw
printf 'X' | dd of=/tmp/ref.raw bs=1 seek=$((30 * FRAME + 1000)) conv=notrunc 2>/dev/null
t_check "gstreamer e2h control: a changed byte in frame 30 is found" \
	sh -c '! cmp -s /tmp/host.raw /tmp/ref.raw'
r1=$(fl_stat $HDEV rx_v4l2)
d1=$(fl_stat $EDEV dma_transfers)
c1=$(fl_stat $EDEV cpu_transfers)
t_check "gstreamer e2h: rx_v4l2 +$N on the host ($((r1 - r0)))" test $((r1 - r0)) -eq $N
t_check "gstreamer e2h: by DMA, no endpoint CPU copy (dma +$((d1 - d0)), cpu +$((c1 - c0)))" \
	test "$((d1 - d0)) $((c1 - c0))" = "$N 0"
rm -f /tmp/host.raw

# Frame rate and drops as v4l2-ctl reports them on the host (its own check of the sequence
# numbers: "dropped buffers: N" on a gap); information, with the endpoint's GStreamer sending
v4l2-ctl -d $VHCAP --stream-mmap --stream-count=90 >/tmp/fps.out 2>&1 &
RX=$!
sleep 1
gst-launch-1.0 -q videotestsrc num-buffers=90 ! $CAPS ! v4l2sink device=$VEOUT io-mode=mmap \
	sync=false show-preroll-frame=false >/tmp/gst.out 2>&1
wait_bounded $RX 30
t_check "e2h: v4l2-ctl received the 90 frames" test $? -eq 0
# v4l2-ctl prints the rate once a stream has lasted a second (unstressed, 90 frames may not)
tr '\r' '\n' </tmp/fps.out | grep -E "fps" | tail -n 2 | sed 's/^/# v4l2-ctl: /'
t_check "e2h: v4l2-ctl found no gap in the sequence numbers (no dropped buffers)" \
	sh -c '! grep -q "dropped buffers" /tmp/fps.out'

# A host app slower than the endpoint's sender (a frame per 0.2 s): the endpoint's GStreamer
# reaches EOS with its last frame still waiting for a host buffer, and its STREAMOFF lets it
# go while the host takes frames. Failed before fl_ep_vout_drain(): 11 of 12 arrived, the
# last was given back at STREAMOFF and the host app waited for it.
r0=$(fl_stat $HDEV rx_v4l2)
gst-launch-1.0 -q v4l2src device=$VHCAP io-mode=mmap num-buffers=12 ! $CAPS ! \
	identity sleep-time=200000 ! fakesink >/tmp/gst-host.out 2>&1 &
RX=$!
sleep 1
ep_send_wait "slower host app" 12
t_check "slower host app: every frame arrived, the last ones after STREAMOFF (exit $rc, rx_v4l2 +$got)" \
	test "$rc $got" = "0 12"

# The host's output device ends its stream while its capture device has buffers posted that
# nobody on the endpoint fills: the output's STREAMOFF waits for its own frames (the tx
# ring) alone and resets nothing under the capture. Failed before fl_v4l2_tx_idle(): the
# drain waited for both rings, ran out after 1 s and reset the queue (rx_reposted +4).
q0=$(fl_stat $HDEV queue_resets)
p0=$(fl_stat $HDEV rx_reposted)
bg v4l2-ctl -d $VHCAP --stream-mmap --stream-count=1000000
gst-launch-1.0 -q v4l2src device=$VCAP io-mode=mmap num-buffers=20 ! $CAPS ! fakesink \
	>/tmp/gst-ep.out 2>&1 &
RX=$!
sleep 1
v4l2-ctl -d $VOUT --stream-out-mmap --stream-count=20 >/tmp/so.out 2>&1
t_check "output ends beside a capture stream: v4l2-ctl sent 20 frames" test $? -eq 0
wait_bounded $RX 30
t_check "output ends beside a capture stream: the endpoint's v4l2src got them (exit $?)" \
	test $? -eq 0
q1=$(fl_stat $HDEV queue_resets)
p1=$(fl_stat $HDEV rx_reposted)
t_check "output ends beside a capture stream: no queue reset (queue_resets +$((q1 - q0)), rx_reposted +$((p1 - p0)))" \
	test "$((q1 - q0)) $((p1 - p0))" = "0 0"
t_check "output ends beside a capture stream: the capture stream goes on" kill -0 $BG
bg_stop

# Both ways at once: host camera -> endpoint's processing stage -> host
gst-launch-1.0 -q v4l2src device=$VHCAP io-mode=mmap num-buffers=$N ! $CAPS ! \
	filesink location=/tmp/back.raw >/tmp/gst-host.out 2>&1 &
RX=$!
gst-launch-1.0 -q v4l2src device=$VCAP io-mode=mmap num-buffers=$N ! $CAPS ! \
	v4l2sink device=$VEOUT io-mode=mmap sync=false show-preroll-frame=false \
	>/tmp/gst-ep.out 2>&1 &
RELAY=$!
sleep 2
# paced as a camera is (10 frames/s, sync=true): unpaced, before the output devices'
# drains waited while the other end takes frames, the host's sender queued all 60 frames at
# once, ended, and its STREAMOFF found the last ones still waiting for the relay after a
# fixed 1 s (one of three runs on 2026-12-07, Documentation/v4l2.rst)
gst-launch-1.0 -q videotestsrc num-buffers=$N pattern=ball ! $CAPS,framerate=10/1 ! \
	v4l2sink device=$VOUT io-mode=mmap sync=true show-preroll-frame=false >/tmp/gst.out 2>&1
t_check "both ways: the host's videotestsrc -> v4l2sink ended" test $? -eq 0
wait_bounded $RELAY 30
t_check "both ways: the endpoint's v4l2src -> v4l2sink relay ended" test $? -eq 0
sed 's/^/# relay: /' /tmp/gst-ep.out | head -n 5
wait_bounded $RX 30
t_check "both ways: the host's v4l2src -> filesink ended" test $? -eq 0
sed 's/^/# host: /' /tmp/gst-host.out | head -n 5
gst-launch-1.0 -q videotestsrc num-buffers=$N pattern=ball ! $CAPS,framerate=10/1 ! \
	filesink location=/tmp/ref.raw >/dev/null 2>&1
t_check "both ways: every byte of the $N frames back at the host" cmp /tmp/back.raw /tmp/ref.raw
rm -f /tmp/back.raw /tmp/ref.raw

# A queue reset the capture device did not ask for: the host's output device stops with
# frames nobody on the endpoint takes (the endpoint's slots fill, the rest wait in the tx
# ring; its STREAMOFF resets the queue after the 1 s drain)
# while the capture device streams beside it. Its posted buffers are posted again, not
# returned with the error flag (v4l2-ctl --verbose prints such a buffer's flags as
# "(error, ...)" and queues it again), and the stream goes on: every frame the endpoint
# sends afterwards arrives. Failed before the re-post (fl_vcap_repost()): error buffers.
q0=$(fl_stat $HDEV queue_resets)
p0=$(fl_stat $HDEV rx_reposted)
v4l2-ctl -d $VHCAP --stream-mmap --stream-count=10 --verbose >/tmp/cap.out 2>&1 &
RX=$!
bg v4l2-ctl -d $VOUT --stream-out-mmap --stream-count=1000000
sleep 1
t_check "other direction's reset: capture streaming, output frames waiting" \
	sh -c "kill -0 $RX && kill -0 $BG"
kill -TERM $BG
wait_bounded $BG 30
t_check "other direction's reset: the output device's v4l2-ctl ended (exit $?), not a hang" \
	test $? -ne 137
q1=$(fl_stat $HDEV queue_resets)
p1=$(fl_stat $HDEV rx_reposted)
t_check "other direction's reset: one queue reset (queue_resets +$((q1 - q0)))" test $((q1 - q0)) -eq 1
t_check "other direction's reset: the capture buffers posted again (rx_reposted +$((p1 - p0)))" \
	test $((p1 - p0)) -gt 0
r0=$(fl_stat $HDEV rx_v4l2)
ep_send_wait "other direction's reset, after it" 10
grep -E "error|dropped" /tmp/cap.out | head -n 3 | sed 's/^/# capture: /'
t_check "other direction's reset: the capture stream took all 10 (exit $rc, rx_v4l2 +$got)" \
	test "$rc $got" = "0 10"
t_check "other direction's reset: no capture buffer came back with the error flag, no drop" \
	sh -c '! grep -qE "error|dropped" /tmp/cap.out'

# The ioctl path and V4L2 never at once
bg v4l2-ctl -d $VEOUT --stream-out-mmap --stream-count=1000000
framelink send -d $EDEV -s 4096 -n 1 -t 500 >/tmp/send.out 2>&1
t_check "while the endpoint's output device streams: its SUBMIT fails with EBUSY" \
	grep -qi "busy" /tmp/send.out
sed 's/^/# /' /tmp/send.out | head -n 2
bg_stop
bg v4l2-ctl -d $VHCAP --stream-mmap --stream-count=1000000
framelink recv -d $HDEV -n 1 -t 500 >/tmp/recv.out 2>&1
t_check "while the host's capture device streams: its POST fails with EBUSY" \
	grep -qi "busy" /tmp/recv.out
sed 's/^/# /' /tmp/recv.out | head -n 2

# ... and that stream's STREAMOFF with its buffers posted (nobody sends): one queue reset
q0=$(fl_stat $HDEV queue_resets)
t_check "capture STREAMOFF: v4l2-ctl streaming, buffers posted" kill -0 $BG
kill -TERM $BG
wait_bounded $BG 30
rc=$?
t_check "capture STREAMOFF: v4l2-ctl ended (exit $rc), not a hang" test $rc -ne 137
q1=$(fl_stat $HDEV queue_resets)
t_check "capture STREAMOFF: one queue reset gave the buffers back (queue_resets +$((q1 - q0)))" \
	test $((q1 - q0)) -eq 1
framelink recv -d $HDEV -n 1 -t 20000 >/tmp/recv.out 2>&1 &
RX=$!
sleep 1
framelink send -d $EDEV -s 4096 -n 1 >/dev/null 2>&1
wait_bounded $RX 30
t_check "capture STREAMOFF: the queue runs again (an ioctl frame received)" test $? -eq 0

# Unbind under an output stream (the host posts nothing: its frames stay submitted)
v4l2-ctl -d $VEOUT --stream-out-mmap --stream-count=1000000 >/tmp/rm.out 2>&1 &
SX=$!
sleep 1
t_check "unbind in flight: v4l2-ctl sending" kill -0 $SX
t_check "unbind in flight: the endpoint function unbound under the stream" fl_unbind
wait_bounded $SX 30
rc=$?
tail -n 2 /tmp/rm.out | sed 's/^/# unbind v4l2-ctl: /'
t_check "unbind in flight: v4l2-ctl ended (exit $rc), not a hang" test $rc -ne 137
rmdir $FN
t_check "unload" sh -c "rmmod framelink_host && rmmod framelink_epf && rmmod pci_epc_loop"
