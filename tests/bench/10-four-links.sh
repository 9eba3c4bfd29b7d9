#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make bench`, four endpoints on one root (issue 12): pci-epc-loop links=4, each link the
# Orin's profile (tegra234-edma) under the J784S4 root with its own link model, a framelink
# pair on each, all four streaming at once. Alone: scripts/vm-run.sh --tests tests/bench
# --run '10-*'.
#
# The model's rate (the same on every link) does not come from framelink: it is 1/16 of the
# lab's DMA engine alone at 4 MiB (bench-lib.sh's reference, taken by 00-bench.sh in the same
# boot, or here when this script runs alone): the single-link bench's 1/4, shared by the four
# links, whose engines the same two emulated CPUs run. framelink's own speed with the model off
# (four links at once, 1 MiB, 8 in flight) is measured and printed next to it. Where the links
# cannot all reach their ceiling they compete, and Jain's index shows how evenly. Then
# h2e, e2h and both at once, four links together, 1 MiB frames, 8 in flight per direction
# (4 each way when both). Lines: "csv-four,MODE,DIR,LINK,SIZE,DEPTH,FRAMES,GBPS,CEILING,RATIO"
# per link and direction (GB/s = 10^9 bytes/s of payload over that link's own run; CEILING
# the link's modelled rate for the direction after TLP overhead), and
# "csv-four-sum,MODE,DIR,LINKS,AGG_GBPS,AGG_CEILING,AGG_RATIO,MIN_RATIO,JAIN" per direction:
# the sum of the four, the lowest ratio and Jain's fairness index over the ratios
# ((sum x)^2 / (n sum x^2): 1 when every link gets the same share of its ceiling, 1/n when
# one link gets everything).
. /tests/lib.sh
. /tests/epc-loop-lib.sh
. /tests/framelink-lib.sh
. /tests/bench-lib.sh

LINKS="0 1 2 3"
SIZE=1048576

# whatever an earlier bench script left loaded (00-bench.sh ends on the kernel's test pair)
rmdir $EP/functions/pci_epf_test/loop0 2>/dev/null
for m in pci_endpoint_test pci_epf_test framelink_host framelink_epf pci_epc_loop; do
	[ -d /sys/module/$m ] && rmmod $m
done

echo "# kernel $(uname -r) $(uname -m), QEMU TCG on $(nproc) vCPUs: numbers measure this VM"
if [ -s /tmp/bench-engine ]; then
	ref4=$(cat /tmp/bench-engine)
	echo "# reference (00-bench.sh, this boot): the DMA engine alone at 4 MiB: $ref4 GB/s"
else
	bench_reference
fi
t_check "four-bench: modules (links=4, tegra234-edma, j784s4; host 16 x 1 MiB per link)" \
	fl_modules "links=4 profile=tegra234-edma rc_profile=j784s4" nbufs=16 buf_size=$SIZE
for i in $LINKS; do
	fl_link $i
	t_check "four-bench: link $i: controller" wait_for 50 test -d $EP/controllers/$EPC
	# crossovers 4 KiB: every frame by DMA (the model paces DMA, not CPU copies)
	t_check "four-bench: link $i: function (16 x 1 MiB slots, crossovers 4 KiB), bind" \
		sh -c ". /tests/lib.sh; . /tests/epc-loop-lib.sh; . /tests/framelink-lib.sh
			fl_link $i; fl_fn_create slots=16 slot_size=$SIZE crossover=4096 \
				rd_crossover=4096 && fl_bind && fl_link_owns"
done

model() { awk -v k="$2" '$1 == k { print $2 }' /sys/kernel/debug/pci-epc-loop/$1/link_model; }
# ceil LOOPDEV DIR(read|write): the link's modelled ceiling in GB/s
ceil() {
	awk -v r="$(model $1 rate_mbps)" -v p="$(model $1 "$2"_payload)" \
		-v o="$(model $1 "$2"_tlp_overhead)" 'BEGIN { printf "%.6f", r / 8000 * p / (p + o) }'
}
loopdev() { if [ "$1" = 0 ]; then echo pci-epc-loop; else echo "pci-epc-loop-$1"; fi; }

# four MODE DEPTH FRAMES: one stream per link, all at once; the csv lines to /tmp/four.I
four() {
	local i
	for i in $LINKS; do
		echo 1 >/sys/kernel/debug/pci-epc-loop/$(loopdev $i)/link_model_reset
	done
	for i in $LINKS; do
		framelink stream -m "$1" -s $SIZE -n "$3" -q "$2" -d /dev/framelink$i \
			-p /dev/framelink-ep$i --csv >/tmp/four.$i 2>&1 &
		echo $! >/tmp/four-pid.$i
	done
	for i in $LINKS; do
		wait_bounded "$(cat /tmp/four-pid.$i)" 300
		echo $? >/tmp/four-rc.$i
	done
	for i in $LINKS; do
		grep -v '^csv,' /tmp/four.$i | sed "s/^/# link $i: /"
		t_check "four-bench: $1 q$2 link $i" test "$(cat /tmp/four-rc.$i)" = 0
	done
}

# ---- the rate: four links at once, model off ----
for i in $LINKS; do echo 0 >/sys/kernel/debug/pci-epc-loop/$(loopdev $i)/rate_mbps; done
four h2e 8 48
sr=$(cat /tmp/four.[0-3] | awk -F, '/^csv,/ { if (m == "" || $8 < m) m = $8 } END { print m + 0 }')
four e2h 8 48
sw=$(cat /tmp/four.[0-3] | awk -F, '/^csv,/ { if (m == "" || $8 < m) m = $8 } END { print m + 0 }')
rate=$(bench_rate 16)
echo "# model off, four links at once, 1 MiB q8: slowest link h2e $sr GB/s, e2h $sw GB/s"
echo "# rate_mbps $rate per link: 1/16 of the DMA engine alone at 4 MiB ($ref4 GB/s)"
echo "csv-four-rate,$sr,$sw,$rate,$(echo $ref4 | tr ' ' ,)"
t_check "four-bench: the model's rate is set (>= 80 Mbit/s)" test "$rate" -ge 80
for i in $LINKS; do echo "$rate" >/sys/kernel/debug/pci-epc-loop/$(loopdev $i)/rate_mbps; done
sed 's/^/# link 0 /' /sys/kernel/debug/pci-epc-loop/pci-epc-loop/link_model |
	grep -E 'rate|payload|overhead'

# ---- four links at once, model on ----
# frames per link: about 5 s at the ceiling, 48..512
n=$(awk -v r="$rate" -v s=$SIZE 'BEGIN { n = int(r / 8000 * 1e9 * 5 / s)
	n = n < 48 ? 48 : n; print (n > 512 ? 512 : n) }')
echo "csv-four-head,mode,dir,link,size,depth,frames,gbps,ceiling_gbps,ratio"
echo "csv-four-sum-head,mode,dir,links,agg_gbps,agg_ceiling_gbps,agg_ratio,min_ratio,jain"
for run in h2e:8 e2h:8 both:4; do
	m=${run%%:*}
	q=${run#*:}
	four $m $q $n
	: >/tmp/four-rows
	for i in $LINKS; do
		grep '^csv,' /tmp/four.$i | while IFS=, read -r _ _m d s dq fr _ns g _rest; do
			c=$(ceil "$(loopdev $i)" "$([ "$d" = h2e ] && echo read || echo write)")
			r=$(awk -v g="$g" -v c="$c" 'BEGIN { printf "%.4f", (c > 0 ? g / c : 0) }')
			echo "csv-four,$m,$d,$i,$s,$dq,$fr,$g,$c,$r"
		done >>/tmp/four-rows
	done
	cat /tmp/four-rows
	for d in h2e e2h; do
		awk -F, -v d=$d -v m=$m '$3 == d { n++; g += $8; c += $9; x += $10; xx += $10 * $10
				if (min == "" || $10 < min) min = $10 }
			END { if (!n) exit
				printf "csv-four-sum,%s,%s,%d,%.6f,%.6f,%.4f,%.4f,%.4f\n", m, d, n, g, c,
					(c > 0 ? g / c : 0), min, (xx > 0 ? x * x / (n * xx) : 0) }' /tmp/four-rows
	done
	awk -F, -v m=$m '{ if (min == "" || $10 < min) min = $10 }
		END { if (min < 0.9) printf "# %s: a link at %.0f%% of its ceiling: the emulated CPUs, not the model, limit four links\n", m, min * 100 }' \
		/tmp/four-rows
done

for i in $LINKS; do
	fl_link $i
	t_check "four-bench: link $i: unbind" sh -c ". /tests/lib.sh; . /tests/epc-loop-lib.sh
		. /tests/framelink-lib.sh; fl_link $i; fl_unbind && rmdir $FN"
done
t_check "four-bench: unload" sh -c 'rmmod framelink_host && rmmod framelink_epf &&
	rmmod pci_epc_loop'
