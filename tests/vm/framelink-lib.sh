# SPDX-License-Identifier: GPL-2.0
# Helpers for the framelink tests (tests/vm/6*-*.sh), sourced after /tests/lib.sh and
# /tests/epc-loop-lib.sh. Not a test itself: the VM runs only /tests/[0-9]*.sh.
#
# One framelink_epf function, $FN, on the loop's controller; a script may set FN to another
# name after sourcing (the helpers read it when they run).

FN=$EP/functions/framelink_epf/fl0
HDEV=/dev/framelink0
EDEV=/dev/framelink-ep0

# What the running kernel's endpoint core gives (Documentation/framelink.rst, "Kernels"):
# FL_LINKDOWN_EVENT=1 from 6.4 (pci_epc_linkdown(); before, an endpoint learns of a link
# loss only from failing transfers, so its frames end EIO), FL_INIT_REPLAY=1 from 6.11
# (pci_epc_notify_pending_init(): a function bound after the controller's init gets it).
# The lab's NVIDIA kernels (patches/nv, release suffix -jp6 / -jp7): no replay; JetPack 6
# has no link-down event, JetPack 7 has one (its Tegra driver never raises it).
case "$(uname -r)" in
*-jp6*) FL_LINKDOWN_EVENT=0 FL_INIT_REPLAY=0 ;;
*-jp7*) FL_LINKDOWN_EVENT=1 FL_INIT_REPLAY=0 ;;
[1-5].* | 6.[0-3].*) FL_LINKDOWN_EVENT=0 FL_INIT_REPLAY=0 ;;
6.[4-9].* | 6.10.*) FL_LINKDOWN_EVENT=1 FL_INIT_REPLAY=0 ;;
*) FL_LINKDOWN_EVENT=1 FL_INIT_REPLAY=1 ;;
esac

# fl_bind: link the function to the controller, start it, wait for both devices. Before
# 6.11, on a controller whose init has already gone by (PERST# deasserted earlier),
# framelink-epf logs that its init never came: then the root reboots (PERST# cycle), as a
# user must on such a kernel.
fl_bind() {
	# lines counted, not a /dev/kmsg mark: writes to /dev/kmsg are rate-limited
	local n0=0
	[ $FL_INIT_REPLAY = 1 ] || n0=$(dmesg | grep -c 'framelink_epf.*init never reached')
	ln -s $FN $EP/controllers/$EPC/ && echo 1 >$EP/controllers/$EPC/start || return 1
	if [ $FL_INIT_REPLAY = 0 ]; then
		wait_for 30 sh -c "test -c $HDEV ||
			[ \$(dmesg | grep -c 'framelink_epf.*init never reached') -gt $n0 ]"
		if [ ! -c $HDEV ] &&
		   [ "$(dmesg | grep -c 'framelink_epf.*init never reached')" -gt "$n0" ]; then
			echo "# fl_bind: no init replay before 6.11: PERST# cycle"
			echo assert >$LOOPDBG/perst && echo deassert >$LOOPDBG/perst || return 1
		fi
	fi
	wait_for 100 test -c $HDEV && wait_for 100 test -c $EDEV
}

# fl_unbind [TRIES]: stop the controller, unlink the function, wait (TRIES x 0.1 s, default
# 100) until the endpoint device is gone.
fl_unbind() {
	echo 0 >$EP/controllers/$EPC/start
	rm -f $EP/controllers/$EPC/${FN##*/}
	wait_for "${1:-100}" test ! -e $EDEV
}

# fl_modules LOOP_PARAMS [HOST_PARAM...]: pci-epc-loop with LOOP_PARAMS (one word list, e.g.
# "profile=tegra234 rc_profile=j784s4"), framelink-epf, framelink-host with the HOST_PARAMs;
# then wait for the loop's controller.
fl_modules() {
	local _loop=$1
	shift
	t_insmod pci-epc-loop $_loop && t_insmod framelink-epf && t_insmod framelink-host "$@" &&
		wait_for 50 test -d $EP/controllers/$EPC
}

# fl_fn_create ATTR=VALUE...: make $FN, write each framelink_epf attribute in the order given,
# then 8 MSI vectors. Not bound.
fl_fn_create() {
	local _a _kv
	mkdir $FN && wait_for 50 sh -c "test -f $FN/framelink_epf.*/slots" || return 1
	_a=$(echo $FN/framelink_epf.*)
	for _kv in "$@"; do
		echo "${_kv#*=}" >$_a/${_kv%%=*} || return 1
	done
	echo 8 >$FN/msi_interrupts
}

# fl_start LOOP_PARAMS HOST_PARAMS ATTR=VALUE...: fl_modules, fl_fn_create, fl_bind.
# HOST_PARAMS is one word list too ("" for none).
fl_start() {
	local _loop=$1 _host=$2
	shift 2
	fl_modules "$_loop" $_host && fl_fn_create "$@" && fl_bind
}

# fl_up PROFILE RC_PROFILE: the pair on endpoint profile PROFILE under root profile
# RC_PROFILE, 8 slots of 4 MiB (61j-framelink-jetpack.sh uses it through 60). The crossovers
# are pinned at auto's defaults (write 64 KiB, read 4 KiB), so which frames go by DMA does not
# depend on what the measurement at enable finds on a loaded machine: the kselftest's cpu and
# dma variants each have sizes to run (74-crossover.sh measures "auto").
fl_up() {
	fl_start "profile=$1 rc_profile=$2" "" slots=8 slot_size=4194304 crossover=65536 \
		rd_crossover=4096
}

# fl_down: unbind, remove the function, unload the three modules.
fl_down() {
	fl_unbind
	rmdir $FN
	rmmod framelink_host && rmmod framelink_epf && rmmod pci_epc_loop
}

# fl_stat DEV NAME: one FL_IOC_STATS counter of DEV, by name as `framelink stats` prints it
# (empty when unreadable). One program, not `framelink stats | sed`: a process costs ~50 ms
# in the test VM, and the figures read counters a few times per injection.
fl_stat() { framelink-testtool stat $1 $2 2>/dev/null; }

# streaming PID N: PID runs and the host ($HDEV) has received more than N frames: a stream
# to cut is one whose frames come back, not just a process that started
streaming() { alive $1 && [ "$(fl_stat $HDEV rx_frames)" -gt $2 ]; }

# fl_stream N [SIZE [SECONDS]]: N round trips of SIZE (default 64K) from the host's bench
# through the endpoint's echo, bounded (default 120 s); the bench's exit status. The last
# lines of the bench go to the log as comments.
fl_stream() {
	local _rc _epid _bpid
	framelink echo -d $EDEV >/tmp/fl-echo.out 2>&1 &
	_epid=$!
	framelink bench -d $HDEV -s ${2:-64K} -n $1 >/tmp/fl-bench.out 2>&1 &
	_bpid=$!
	wait_bounded $_bpid ${3:-120}
	_rc=$?
	kill $_epid 2>/dev/null
	wait $_epid 2>/dev/null
	tail -n 3 /tmp/fl-bench.out | sed 's/^/# /'
	return $_rc
}

# fl_allocs MODE SIZE N: slab allocations (kmem tracepoints kmalloc and kmem_cache_alloc) made
# during `framelink stream -m MODE -s SIZE -n N -q 8`, by call site: prints "HOST EP PROVIDER
# OVERRUN": framelink_host, framelink_epf, pci-epc-loop (the DMA provider: dmaengine's prep
# allocates descriptors, as dw-edma's does) and events the trace buffer lost (counts then
# incomplete). Setup (open, mmap, POST) allocates too: compare two N to get per frame.
fl_allocs() {
	local T=/sys/kernel/tracing e
	[ -e $T/trace ] || mount -t tracefs nodev $T 2>/dev/null
	echo 0 >$T/tracing_on
	echo 8192 >$T/buffer_size_kb
	echo >$T/trace
	for e in kmalloc kmem_cache_alloc kmalloc_node kmem_cache_alloc_node; do
		[ -e $T/events/kmem/$e/enable ] && echo 1 >$T/events/kmem/$e/enable
	done
	echo 1 >$T/tracing_on
	framelink stream -m "$1" -s "$2" -n "$3" -q 8 >/tmp/fl-allocs.out 2>&1
	echo 0 >$T/tracing_on
	for e in kmalloc kmem_cache_alloc kmalloc_node kmem_cache_alloc_node; do
		[ -e $T/events/kmem/$e/enable ] && echo 0 >$T/events/kmem/$e/enable
	done
	cat $T/trace >/tmp/fl-allocs.txt
	echo "$(grep -c '\[framelink_host\]' /tmp/fl-allocs.txt) $(grep -c '\[framelink_epf\]' /tmp/fl-allocs.txt)" \
		"$(grep -c '\[pci_epc_loop\]' /tmp/fl-allocs.txt)" \
		"$(cat $T/per_cpu/cpu*/stats | awk '/^overrun/ { s += $2 } END { print s + 0 }')"
	echo >$T/trace
}

# fl_link N: point the helpers above at link N of `pci-epc-loop links=...` (issue 12, four
# endpoints): EPC and LOOPDBG at the controller of DT node pci-epc-loop-N (link 0 is
# pci-epc-loop: the single-link values), FN at function fl<N>, HDEV and EDEV at
# /dev/framelink<N> and /dev/framelink-ep<N>, the ids both drivers give when the links are
# bound one after the other in order 0, 1, ... (fl_link_owns checks it).
fl_link() {
	local _c=pci-epc-loop
	[ "$1" = 0 ] || _c=pci-epc-loop-$1
	EPC=$_c
	LOOPDBG=/sys/kernel/debug/pci-epc-loop/$_c
	FN=$EP/functions/framelink_epf/fl$1
	HDEV=/dev/framelink$1
	EDEV=/dev/framelink-ep$1
}

# fl_link_owns: $HDEV sits on $EPC's root bus (its sysfs path runs through the loop's
# platform device), so a stream on $HDEV crosses that link and no other.
fl_link_owns() {
	readlink -f /sys/class/misc/${HDEV#/dev/}/device | grep -q "/platform/$EPC/"
}

# fl_kselftest_skips NAME DMA VECTORS: declare the skips of "framelink_test -f fl" run as
# t_run_tap NAME with the crossovers fl_up pins: DMA 0 when the endpoint profile has no DMA
# channels (tegra234: the dma variant skips whole; jetpack has NVIDIA's eDMA library),
# VECTORS 0 when framelink-host runs without an interrupt vector (vectors=0). With the pinned
# crossovers, sizes_both_ways and random_sizes have sizes on both variants. Three cases run
# on the cpu variant only,
# host_poll_without_vector needs a host without a vector, and ring_boundaries a host with
# more tx buffers than tx ring entries (62-framelink-hostile.sh sets that up and runs it).
fl_kselftest_skips() {
	local _n=$1.fl _t
	t_skip_expected "$_n.cpu.ring_boundaries" \
		"the host's tx ring is deeper than its tx buffers (62-framelink-hostile.sh runs it)"
	if [ "$2" = 0 ]; then
		t_skip_expected "$_n.dma.*" "the endpoint profile has no DMA channels"
	else
		for _t in ring_boundaries wakeup_after_busy_polling batch_ending_short_wakes; do
			t_skip_expected "$_n.dma.$_t" "the cpu variant covers it"
		done
		t_skip_expected "$_n.dma.host_poll_without_vector" "the host has an interrupt vector"
	fi
	if [ "$3" = 0 ]; then
		t_skip_expected "$_n.cpu.wakeup_after_busy_polling" "no interrupt: the host polls"
		t_skip_expected "$_n.cpu.batch_ending_short_wakes" "no interrupt: the host polls"
	else
		t_skip_expected "$_n.cpu.host_poll_without_vector" "the host has an interrupt vector"
	fi
}

# tally_line FILE WHO: the app's last "WHO: status:" line, in $tally_l (one process; the
# figures read a few tallies per injection, and a process costs ~50 ms in the test VM)
tally_line() { tally_l=$(sed -n "/^$2: status:/h; \${x;p;}" $1); }

# tally_count NAME: NAME's count in $tally_l, in $tally_c (0 when absent; builtins only)
tally_count() {
	local _tok
	tally_c=0
	for _tok in ${tally_l#*status:}; do
		case "$_tok" in "$1="*) tally_c=${_tok#*=}; return ;; esac
	done
}

# tally_only_l ALLOWED [ENDS]: $tally_l exists and names no errno outside ALLOWED (a |-list;
# OK and an end=EINTR from our SIGINT aside), and an end only from ENDS (default ALLOWED)
tally_only_l() {
	local _tok _nm
	[ -n "$tally_l" ] || return 1
	for _tok in ${tally_l#*status:}; do
		_nm=${_tok%%=*}
		case "$_nm" in
		OK) ;;
		end) [ "${_tok#end=}" = EINTR ] && continue
			case "|${2:-$1}|" in *"|${_tok#end=}|"*) ;; *) return 1 ;; esac ;;
		*) case "|$1|" in *"|$_nm|"*) ;; *) return 1 ;; esac ;;
		esac
	done
}

# tally_only FILE WHO ALLOWED [ENDS]: tally_only_l on the app's "WHO: status:" line
tally_only() {
	tally_line "$1" "$2"
	tally_only_l "$3" "$4"
}

# tally_n FILE WHO NAME: one count of the app's status line (0 when absent)
tally_n() {
	tally_line "$1" "$2"
	tally_count "$3"
	echo "$tally_c"
}

# kml_reset: kmemleak forgets what it reported so far; kml_count counts from here. Right
# after a kml_count (nothing ran since its scans, which marked every leak reported) a clear
# alone does it: a scan takes about 8 s in the test kernel, and the figures count five times.
kml_reset() {
	[ -w /sys/kernel/debug/kmemleak ] || return 0
	[ "${kml_scanned:-0}" = 1 ] || echo scan >/sys/kernel/debug/kmemleak
	echo clear >/sys/kernel/debug/kmemleak
	kml_scanned=0
}

# kml_count: kmemleak's unreferenced objects since kml_reset (kml_scans: everything allocated
# before the call), in $kml_n, the report to the log (it fails the run there too). Run it
# before the modules unload: their frames in the backtraces still have names. No kmemleak: 0,
# said.
kml_count() {
	local _k=/sys/kernel/debug/kmemleak
	kml_n=0
	if [ ! -w $_k ]; then
		echo "# no kmemleak in this kernel: no leak counted"
		return 0
	fi
	kml_scans
	kml_n=$(grep -c '^unreferenced object' $_k)
	[ "$kml_n" -gt 0 ] && sed 's/^/# kmemleak: /' $_k | head -n 80
	kml_scanned=1
	return 0
}

# v4l_node NAME: /dev/videoN whose V4L2 name is NAME (issue 29: "framelink framelink<N>" for the
# host's output device, "framelink framelink-ep<N>" for the endpoint's capture device,
# "vivid-000-vid-cap" for vivid's first camera)
v4l_node() {
	for v in /sys/class/video4linux/video*; do
		[ "$(cat $v/name)" = "$1" ] && echo /dev/${v##*/} && return 0
	done
	return 1
}

# v4l2_compliance_ok FILE DRIVER NODE: v4l2-compliance's output FILE for DRIVER's NODE shows
# 0 failed and no warning but the one Documentation/v4l2.rst explains: "QBUF returned the
# buffer as DONE" (the other end's engine finished the frame before the QBUF call returned
# to user space, which V4L2 allows). The streaming tests print their progress with carriage
# returns: a warning may share a line with it. The warnings found go to the log.
v4l2_compliance_ok() {
	tail -n 1 $1 | sed 's/^/# /'
	tr '\r' '\n' <$1 | grep -E "(fail|warn):" >/tmp/comp-w.out
	sed 's/^/# /' /tmp/comp-w.out | head -n 10
	_w=$(sed -n "s|^Total for $2 device $3: [0-9]*, Succeeded: [0-9]*, Failed: 0, Warnings: \([0-9]*\)$|\1|p" $1)
	[ -n "$_w" ] || return 1
	[ "$_w" -eq "$(grep -c 'warn:' /tmp/comp-w.out)" ] || return 1
	! grep 'warn:' /tmp/comp-w.out | grep -vq 'QBUF returned the buffer as DONE'
}
