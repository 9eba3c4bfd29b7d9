#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The boards' device trees with framelink's overlays (issue 9 section 4), checked without a
# board:
#  1. for each kernel tree given: build the boards' own DTBs from its sources with the
#     kernel's cpp + dtc flow (tegra234-p3737-0000+p3701-0000, k3-j784s4-evm), compile our
#     overlays (dts/*-framelink-*.dtso) with every default dtc warning on and refuse any,
#     apply them with fdtoverlay and require the nodes and properties the drivers look up,
#     and the reserved-memory checker passing on the result;
#  2. the CMA and slot sizes in the overlays cover the drivers' defaults, recomputed from
#     the driver sources;
#  3. the reserved-memory checker refuses each bad case in tests/dts/ (the first "// expect:"
#     line of each file is the refusal it must print) and passes/refuses the live fixtures.
#
# Usage: check-board-dts.sh KDIR...   (kernel source trees; Debian's 6.12 and newest in
#                                      `make check`). Needs cpp, dtc, fdtoverlay, fdtget,
#                                      qemu-system-aarch64 (for the QEMU virt base tree).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: check-board-dts.sh KDIR..." >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
checker=$top/scripts/check-reserved-memory.py

ok() { echo "board-dts: ok   $*"; }
bad() {
	echo "board-dts: FAIL $*"
	fails=$((fails + 1))
}

# The kernel's DTB flow (scripts/Makefile.dtbs): cpp with the include prefixes, then dtc with
# the warnings the kernel silences at W=0 silenced too; -@ so overlays can use the labels.
# The boards' own warnings are the kernel's business and only logged.
build_base() {
	local kdir=$1 src=$2 out=$3 dir
	dir=$(dirname "$kdir/arch/arm64/boot/dts/$src")
	cpp -nostdinc -I "$kdir/scripts/dtc/include-prefixes" -I "$dir" -undef -D__DTS__ \
		-x assembler-with-cpp -o "$out.pp" "$kdir/arch/arm64/boot/dts/$src" &&
		dtc -@ -I dts -O dtb -b 0 -i "$dir" -Wno-unique_unit_address -Wno-unit_address_vs_reg \
			-Wno-avoid_unnecessary_addr_size -Wno-alias_paths -Wno-graph_child_address \
			-Wno-simple_bus_reg -o "$out" "$out.pp" 2>"$out.log"
}

# An overlay of ours: every default dtc warning on but avoid_unnecessary_addr_size (the
# kernel's dtbs build silences it too at W=0: an overlay's root fragment must restate the
# root's cells for the reserved-memory checks yet has no reg child of its own); any output is
# a failure.
build_overlay() {
	local kdir=$1 dtso=$2 out=$3
	cpp -nostdinc -I "$kdir/scripts/dtc/include-prefixes" -undef -D__DTS__ \
		-x assembler-with-cpp -o "$out.pp" "$dtso" || return 1
	dtc -@ -I dts -O dtb -Wno-avoid_unnecessary_addr_size -o "$out" "$out.pp" 2>"$out.log" ||
		{ cat "$out.log"; return 1; }
	if [ -s "$out.log" ]; then
		cat "$out.log"
		return 1
	fi
}

get() { fdtget "$@" 2>/dev/null; }

# want DTB NODE PROP VALUE WHAT: the property's value as fdtget prints it is VALUE.
want() {
	local v
	v=$(get "$1" "$2" "$3") || { bad "$5: $2 has no $3"; return; }
	[ "$v" = "$4" ] && ok "$5: $2 $3 = $v" || bad "$5: $2 $3 = '$v', want '$4'"
}

# have DTB NODE PROP WHAT: the property exists.
have() {
	get "$1" "$2" "$3" >/dev/null && ok "$4: $2 has $3" || bad "$4: $2 lacks $3"
}

# resolves DTB NODE PROP LABEL: the phandle in PROP is the node LABEL names in __symbols__.
resolves() {
	local dtb=$1 node=$2 prop=$3 label=$4 what=$5 path ph want
	path=$(get "$dtb" /__symbols__ "$label") || { bad "$what: no label $label"; return; }
	ph=$(get -t u "$dtb" "$node" "$prop") || { bad "$what: $node has no $prop"; return; }
	want=$(get -t u "$dtb" "$path" phandle) || { bad "$what: $path has no phandle"; return; }
	[ "${ph%% *}" = "$want" ] && ok "$what: $node $prop -> $path" ||
		bad "$what: $node $prop <$ph> is not $path <$want>"
}

# The endpoint: what pcie-tegra194.c (EP mode) and framelink-epf look up.
check_orin() {
	local dtb=$1 k=$2 ep=/bus@0/pcie-ep@141a0000 rp=/bus@0/pcie@141a0000 pin
	want "$dtb" $ep compatible nvidia,tegra234-pcie-ep "orin $k"
	want "$dtb" $ep status okay "orin $k"
	want "$dtb" $rp status disabled "orin $k"
	want "$dtb" $ep reg-names "appl atu_dma dbi addr_space" "orin $k"
	want "$dtb" $ep num-lanes 8 "orin $k"
	for p in reg reset-gpios nvidia,refclk-select-gpios nvidia,enable-ext-refclk \
		vddio-pex-ctl-supply nvidia,bpmp phys phy-names clocks resets interrupts \
		power-domains; do
		have "$dtb" $ep $p "orin $k"
	done
	resolves "$dtb" $ep memory-region framelink_slots "orin $k"
	want "$dtb" $ep memory-region-names framelink-slots "orin $k"
	resolves "$dtb" $ep pinctrl-0 framelink_pex_rst_c5 "orin $k"
	pin=$(get "$dtb" /__symbols__ framelink_pex_rst_c5)/perst
	want "$dtb" "$pin" nvidia,pins pex_l5_rst_n_paf1 "orin $k"
	want "$dtb" "$pin" nvidia,enable-input 1 "orin $k"
	want "$dtb" /reserved-memory/framelink-slots compatible shared-dma-pool "orin $k"
	have "$dtb" /reserved-memory/framelink-slots reusable "orin $k"
}

# The root: what pci-j721e.c and framelink-host's CMA need.
check_j784s4() {
	local dtb=$1 k=$2 rc=/bus@100000/pcie@2900000 phy
	want "$dtb" $rc compatible ti,j784s4-pcie-host "j784s4 $k"
	want "$dtb" $rc status okay "j784s4 $k"
	want "$dtb" $rc num-lanes 4 "j784s4 $k"
	want "$dtb" $rc max-link-speed 3 "j784s4 $k"
	for p in reg reset-gpios phys ranges dma-ranges; do
		have "$dtb" $rc $p "j784s4 $k"
	done
	if get "$dtb" /bus@100000/pcie-ep@2900000 status >/dev/null &&
		[ "$(get "$dtb" /bus@100000/pcie-ep@2900000 status)" = okay ]; then
		bad "j784s4 $k: pcie-ep@2900000 is enabled too"
	fi
	phy=$(get "$dtb" /__symbols__ serdes1_pcie0_link)
	resolves "$dtb" $rc phys serdes1_pcie0_link "j784s4 $k"
	want "$dtb" "$phy" cdns,num-lanes 4 "j784s4 $k"
	have "$dtb" /reserved-memory/linux,cma linux,cma-default "j784s4 $k"
	have "$dtb" /reserved-memory/linux,cma reusable "j784s4 $k"
}

# size DTB NODE: the size property of a dynamic region (2 cells) in bytes.
size_of() {
	local v
	v=$(get -t u "$1" "$2" size) || return 1
	# shellcheck disable=SC2086 # two cells, split on purpose
	set -- $v
	echo $((($1 << 32) | $2))
}

# The drivers' defaults from their sources, so a changed default fails here, not on a board.
check_sizes() {
	local orin=$1 ti=$2 src=$top/drivers/framelink uapi=$top/include/uapi/linux/framelink.h
	local abi=$top/include/framelink/abi-check.h
	local nbufs buf ring cqoff cqe slots slot bar cq need have_b mib=$((1 << 20))
	nbufs=$(sed -n 's/^static unsigned int nbufs = \([0-9]*\);/\1/p' "$src/host/main.c")
	buf=$(sed -n 's/^static unsigned int buf_size = SZ_\([0-9]*\)M;/\1/p' "$src/host/main.c")
	ring=$(sed -n 's/^#define FL_RING_MAX_ENTRIES[[:space:]]*\([0-9]*\).*/\1/p' "$uapi")
	cqoff=$(sed -n 's/^#define FL_HOST_CQ_OFFSET[[:space:]]*\([0-9]*\).*/\1/p' "$uapi")
	cqe=$(sed -n 's/^FL_ABI_ASSERT(sizeof(struct fl_cqe) == \([0-9]*\));/\1/p' "$abi")
	slots=$(sed -n 's/^[[:space:]]*\.slots = \([0-9]*\),/\1/p' "$src/epf/configfs.c")
	slot=$(sed -n 's/^[[:space:]]*\.slot_size = SZ_\([0-9]*\)M,/\1/p' "$src/epf/configfs.c")
	bar=$(sed -n 's/^#define FL_BAR_SIZE[[:space:]]*\(0x[0-9a-f]*\).*/\1/p' "$uapi")
	for v in nbufs buf ring cqoff cqe slots slot bar; do
		[ -n "${!v}" ] || { bad "sizes: cannot read the default '$v' from the sources"; return; }
	done
	# The completion ring: both rings full, rounded to 64 KiB (host/main.c).
	cq=$(((cqoff + 2 * ring * cqe + 65535) / 65536 * 65536))
	# Host: the buffers + the ring + the 32 MiB default CMA the node replaces.
	need=$((nbufs * buf * mib + cq + 32 * mib))
	have_b=$(size_of "$ti" /reserved-memory/linux,cma) || { bad "sizes: no CMA size"; return; }
	[ "$have_b" -ge "$need" ] &&
		ok "sizes: j784s4 CMA $((have_b / mib)) MiB >= $nbufs x $buf MiB + ring $cq B + 32 MiB" ||
		bad "sizes: j784s4 CMA $have_b B < need $need B ($nbufs x $buf MiB + $cq + 32 MiB)"
	# Endpoint: the slots + BAR0.
	need=$((slots * slot * mib + bar))
	have_b=$(size_of "$orin" /reserved-memory/framelink-slots) ||
		{ bad "sizes: no slot region size"; return; }
	[ "$have_b" -ge "$need" ] &&
		ok "sizes: orin slots $((have_b / mib)) MiB >= $slots x $slot MiB + BAR0 $((bar))" ||
		bad "sizes: orin slots $have_b B < need $need B"
}

boards() {
	local kdir=$1 k orin ti ram nw
	k=$(basename "$kdir" | sed 's/^linux-source-\([0-9.]*\)-.*/\1/')
	orin=$work/$k-orin
	ti=$work/$k-ti
	if ! build_base "$kdir" nvidia/tegra234-p3737-0000+p3701-0000.dts "$orin-base.dtb" ||
		! build_base "$kdir" ti/k3-j784s4-evm.dts "$ti-base.dtb"; then
		bad "$k: the boards' own DTBs do not build"
		return
	fi
	# The overlays restate the root's cells for dtc: they must be the base trees' values.
	for b in "$orin-base.dtb" "$ti-base.dtb"; do
		[ "$(get "$b" / '#address-cells') $(get "$b" / '#size-cells')" = "2 2" ] ||
			bad "$k: $(basename "$b") root cells are not 2/2; the overlays assume them"
	done
	nw=$(cat "$orin-base.dtb.log" "$ti-base.dtb.log" | grep -c Warning || true)
	ok "$k: built the boards' DTBs ($nw kernel-side dtc warnings, not ours)"
	for o in "$top/dts/tegra234-p3737-0000+p3701-0000-framelink-ep.dtso" \
		"$top/dts/k3-j784s4-evm-framelink-rc.dtso" "$top/tests/dts/p3701-0000-ram.dtso"; do
		if build_overlay "$kdir" "$o" "$work/$k-$(basename "$o").dtbo"; then
			ok "$k: $(basename "$o") compiles with no dtc warning"
		else
			bad "$k: $(basename "$o") has dtc warnings or errors (above)"
			return
		fi
	done
	fdtoverlay -i "$orin-base.dtb" -o "$orin.dtb" \
		"$work/$k-tegra234-p3737-0000+p3701-0000-framelink-ep.dtso.dtbo" ||
		{ bad "$k: fdtoverlay refused the Orin overlay"; return; }
	fdtoverlay -i "$ti-base.dtb" -o "$ti.dtb" "$work/$k-k3-j784s4-evm-framelink-rc.dtso.dtbo" ||
		{ bad "$k: fdtoverlay refused the J784S4 overlay"; return; }
	ok "$k: fdtoverlay applied both overlays"
	check_orin "$orin.dtb" "$k"
	check_j784s4 "$ti.dtb" "$k"
	# The Orin tree has no /memory (UEFI gives it): add the module's RAM to check placement.
	ram=$work/$k-p3701-0000-ram.dtso.dtbo
	fdtoverlay -i "$orin.dtb" -o "$orin-ram.dtb" "$ram" || { bad "$k: RAM stub"; return; }
	"$checker" "$orin-ram.dtb" && ok "$k: orin reserved memory" || bad "$k: orin reserved memory"
	"$checker" "$ti.dtb" && ok "$k: j784s4 reserved memory" || bad "$k: j784s4 reserved memory"
	check_sizes "$orin.dtb" "$ti.dtb"
}

bad_cases() {
	local virt=$work/virt.dtb t expect
	"$top/scripts/qemu-dtb.sh" "$virt" "$top/dts/qemu-virt.dtso" >/dev/null 2>&1 ||
		{ bad "QEMU virt base tree"; return; }
	for t in "$top"/tests/dts/*.dtso "$top"/tests/dts/*.dts; do
		expect=$(sed -n 's|^// expect: ||p' "$t" | head -n1)
		[ -n "$expect" ] || continue
		case $t in
		*.dtso)
			dtc -q -@ -I dts -O dtb -o "$work/t.dtbo" "$t" &&
				fdtoverlay -i "$virt" -o "$work/t.dtb" "$work/t.dtbo" ||
				{ bad "$(basename "$t") does not build"; continue; }
			;;
		*.dts)
			dtc -q -I dts -O dtb -o "$work/t.dtb" "$t" ||
				{ bad "$(basename "$t") does not build"; continue; }
			;;
		esac
		refuses_dtb "$(basename "$t")" "$work/t.dtb" "$expect"
	done
	# overlap.dtso predates the expect lines: qemu-dtb.sh's own stage covers it.
	live_cases
}

# refuses_dtb NAME DTB EXPECT: the checker exits 1 and prints EXPECT (an extended regex).
refuses_dtb() {
	local name=$1 dtb=$2 expect=$3 out rc=0
	out=$("$checker" "$dtb" 2>&1) || rc=$?
	if [ $rc -eq 1 ] && grep -Eq -- "$expect" <<<"$out"; then
		ok "refused $name: $(grep -E -- "$expect" <<<"$out" | head -n1)"
	else
		bad "$name: the checker did not refuse it with '$expect' (rc $rc): $out"
	fi
}

live_cases() {
	local d=$top/tests/dts/live root=$work/live out rc
	mkdir -p "$root/sys/firmware" "$root/proc"
	dtc -q -I dts -O dtb -o "$root/sys/firmware/fdt" "$d/fdt.dts" || { bad "live fdt"; return; }
	cp "$d/iomem-good.txt" "$root/proc/iomem"
	if out=$("$checker" --live --root "$root" 2>&1); then
		ok "live: good system passes: $out"
	else
		bad "live: the good system was refused: $out"
	fi
	for f in rejected:"is not reserved in /proc/iomem" rejected:"no reserved range of" \
		nonroot:"run as root"; do
		cp "$d/iomem-${f%%:*}.txt" "$root/proc/iomem"
		out=$("$checker" --live --root "$root" 2>&1) && rc=0 || rc=$?
		if [ $rc -eq 1 ] && grep -q -- "${f#*:}" <<<"$out"; then
			ok "live: refused iomem-${f%%:*}: $(grep -- "${f#*:}" <<<"$out" | head -n1)"
		else
			bad "live: iomem-${f%%:*} not refused with '${f#*:}' (rc $rc): $out"
		fi
	done
}

t0=$(date +%s)
for kdir in "$@"; do
	boards "$kdir"
done
bad_cases
echo "board-dts: $fails failed, $(($(date +%s) - t0))s"
[ $fails -eq 0 ]
