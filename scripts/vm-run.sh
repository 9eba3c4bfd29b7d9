#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot the framelink test VM (QEMU virt, arm64, GICv3 + ITS, TCG) on the project's 6.12 test
# kernel (or 6.1, jp6, jp7: --kernel) with the dts/ overlay, run the tests in an initramfs, and
# judge the console log.
#
# Usage: vm-run.sh [--kernel 6.12|6.1|6.1-gcov|jp6|jp7] [--tests DIR] [--ko FILE]... [--run PATTERN]
#                  [--skip PATTERN] [--log FILE]
#                  [--timeout S] [--modules DIR] [--gcov] [--cmdline WORD]...
#   --kernel V     the test kernel: 6.12 (default) or 6.1 (before 6.4: the endpoint core's
#                  event notifier; scripts/kernel-image.sh; 6.1-gcov: with gcov, make
#                  coverage's), jp6 or jp7 (6.12 with NVIDIA's endpoint-core event delivery;
#                  scripts/nv-kernel.sh); modules from build/V
#   --tests DIR    scripts copied to /tests (default tests/vm); /tests/NN-*.sh run in order;
#                  DIR,DIR,...: the scripts of each (make check: the demo, then the figures)
#   --ko FILE      extra module for /modules (the project's own are added from build/V)
#   --run PATTERN  only the /tests scripts matching PATTERN, or PAT,PAT,... (fl_run=)
#   --skip PATTERN leave out the scripts matching PATTERN, or PAT,PAT,... (fl_skip=)
#   --log FILE     console log (default build/vm/console.log)
#   --timeout S    hard limit for the whole VM run (default $FRAMELINK_VM_TIMEOUT or 3000)
#   --modules DIR  the project's modules from DIR instead of build/V (make coverage's gcov
#                  build in build/6.12-gcov)
#   --gcov         fl_gcov=1: after the judged part of the log, init prints the gcov counts of
#                  framelink's modules (scripts/coverage.sh reads them from the log)
#   --cmdline WORD a word for the kernel command line that a script reads from /proc/cmdline
#                  (make check: fl_demo_frames=16, tests/demo/00-demo.sh; fl_late_ack_repeat=N,
#                  tests/vm/65-notify.sh)
# Exit status: 0 when every test passed and the log has no splat; 1 otherwise.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tests=$top/tests/vm
log=$top/build/vm/console.log
timeout=${FRAMELINK_VM_TIMEOUT:-3000}
run=
skip=
kver=6.12
extra_ko=()
modules=
gcov=
cmdline=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kver=$2; shift 2 ;;
	--tests) tests=$2; shift 2 ;;
	--ko) extra_ko+=("$2"); shift 2 ;;
	--run) run=$2; shift 2 ;;
	--skip) skip=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--modules) modules=$2; shift 2 ;;
	--gcov) gcov=1; shift ;;
	--cmdline) cmdline="$cmdline $2"; shift 2 ;;
	*) echo "vm-run: unknown argument $1" >&2; exit 2 ;;
	esac
done

case "$kver" in
6.12) kdir=$("$top/scripts/kernel.sh" 6.12 | tail -n1) ;;
6.1 | 6.1-gcov) kdir=$("$top/scripts/kernel-image.sh" "$kver" | tail -n1) ;;
jp6 | jp7) kdir=$("$top/scripts/nv-kernel.sh" "$kver" | tail -n1) ;;
*) echo "vm-run: --kernel 6.12, 6.1, 6.1-gcov, jp6 or jp7" >&2; exit 2 ;;
esac
# A work directory per run: two runs at once (6.12 and 6.1) must not share an initramfs
mkdir -p "$top/build/vm" "$(dirname "$log")"
work=$(mktemp -d "$top/build/vm/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$top/scripts/qemu-dtb.sh"
machine=("${QEMU_MACHINE[@]}")

# DTB: QEMU's own with the project's overlay, its reserved memory checked before it boots.
"$top/scripts/qemu-dtb.sh" "$work/virt-framelink.dtb" "$top/dts/qemu-virt.dtso"

# Initramfs: busybox, modules, test programs and scripts, listed for gen_init_cpio so no
# device node needs root to create.
root=$work/root
rm -rf "$root"
mkdir -p "$root"/{bin,modules,tests,usr/bin}
cp "$("$top/scripts/busybox-arm64.sh")" "$root/bin/busybox"
cp "$top/tests/vm/init" "$root/init"
cp "$top"/tests/vm/*lib.sh "$root/tests/"
for d in ${tests//,/ }; do
	cp "$d"/*.sh "$root/tests/" 2>/dev/null || true
done
cp "$kdir/drivers/pci/endpoint/functions/pci-epf-test.ko" "$kdir/drivers/misc/pci_endpoint_test.ko" \
	"$root/modules/"
# An explicit --modules that is not there is a mistake, not a run without the project's modules
if [ -n "$modules" ] && [ ! -d "$modules" ]; then
	echo "vm-run: --modules $modules: no such directory" >&2
	exit 2
fi
modules=${modules:-$top/build/$kver}
if [ -d "$modules" ]; then
	find "$modules" -name '*.ko' -exec cp {} "$root/modules/" \;
fi
for ko in "${extra_ko[@]}"; do cp "$ko" "$root/modules/"; done
if [ -d "$top/build/arm64/bin" ]; then
	cp "$top"/build/arm64/bin/* "$root/usr/bin/"
fi
# Debian's arm64 v4l-utils and GStreamer (issue 29), for the kernels with V4L2 (not 6.1)
if [ "${kver%-gcov}" != 6.1 ]; then
	cp -a "$("$top/scripts/arm64-userland.sh")"/. "$root/"
fi
{
	echo "dir /dev 0755 0 0"
	echo "nod /dev/console 0600 0 0 c 5 1"
	(cd "$root" && find . -mindepth 1 | sort) | while read -r p; do
		p=${p#./}
		if [ -d "$root/$p" ]; then
			echo "dir /$p 0755 0 0"
		else
			echo "file /$p $root/$p $(stat -c %a "$root/$p") 0 0"
		fi
	done
} >"$work/initramfs.list"
"$kdir/usr/gen_init_cpio" "$work/initramfs.list" | gzip -1 >"$work/initramfs.cpio.gz"

# vivid (built into the test kernel): two cameras, video capture nodes only; instance 0
# allocates with dma-contig (one contiguous buffer, as a CSI-2 receiver's vb2-dma-contig),
# instance 1 with vmalloc (scattered pages: the scatter-gather case of FL_IOC_IMPORT).
# Only the 6.12 kernels (and jp6, jp7 built on it) have vivid (scripts/kconfig/vm-6.12.config).
vivid=
[ "${kver%-gcov}" != 6.1 ] && vivid="vivid.n_devs=2 vivid.node_types=0x1,0x1 vivid.allocators=1,0"
append="console=ttyAMA0 rdinit=/init log_buf_len=8M panic=-1 cma=256M${vivid:+ $vivid} ${run:+fl_run=$run}${skip:+ fl_skip=$skip}${gcov:+ fl_gcov=1}$cmdline"
echo "vm-run: booting $(basename "$kdir"), tests from ${tests#"$top"/}, log $log (timeout ${timeout}s)"
start=$(date +%s)
set +e
timeout -k 10 "$timeout" qemu-system-aarch64 "${machine[@]}" -display none -monitor none \
	-serial stdio -no-reboot -kernel "$kdir/arch/arm64/boot/Image" -dtb "$work/virt-framelink.dtb" \
	-initrd "$work/initramfs.cpio.gz" -append "$append" </dev/null | tee "$log"
qemu_rc=${PIPESTATUS[0]}
set -e
echo "vm-run: VM ran $(($(date +%s) - start)) s, qemu exit $qemu_rc"
[ "$qemu_rc" -eq 124 ] && echo "vm-run: TIMEOUT after ${timeout}s"
"$top/scripts/tap-summary.py" "$log"
