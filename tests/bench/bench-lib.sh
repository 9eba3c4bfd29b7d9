# SPDX-License-Identifier: GPL-2.0
# make bench's reference (sourced by tests/bench/*.sh after lib.sh and epc-loop-lib.sh; not a
# test itself): the lab's DMA engine alone, with no framelink code in the loop, so that the
# link model's rate does not depend on what it measures (issue 28 item 1).
#
# bench_reference: pci-epc-loop (tegra234-edma, model off) and loop-dmatest, which streams
# transfers of 64 KiB, 1 MiB and 4 MiB on 2 channels per direction (as framelink-epf takes),
# the better of two runs each; prints "csv-ref,SIZE,READ_GBPS,WRITE_GBPS" per size, unloads,
# and leaves the 4 MiB speeds in $ref4 ("READ WRITE", GB/s) and in /tmp/bench-engine for the
# scripts after it in the same boot.

BENCH_D=/sys/kernel/debug/loop-dmatest

# bench_rate DEN: rate_mbps for 1/DEN of the engine's slower direction at 4 MiB ($ref4)
bench_rate() {
	awk -v s="$ref4" -v d="$1" 'BEGIN { split(s, a, " "); m = a[1] < a[2] ? a[1] : a[2]
		print int(m * 8000 / d) }'
}

# bench_dres DIR FIELD: FIELD of loop-dmatest's result line for DIR
bench_dres() {
	awk -v k="$1" -v f="$2" '$1 == k { for (i = 2; i < NF; i++) if ($i == f) print $(i + 1) }' \
		$BENCH_D/result
}

# bench_ref DIR SIZE COUNT: the better of two runs in GB/s, COUNT transfers on each of 2
# channels
bench_ref() {
	local b=0 v try
	for try in 1 2; do
		echo "stream $1 $2 $3 2" >$BENCH_D/cmd
		v=$(bench_dres "$1" mbps)
		b=$(awk -v a=$b -v v="${v:-0}" 'BEGIN { printf "%.6f", (v / 1000 > a ? v / 1000 : a) }')
	done
	echo "$b"
}

bench_reference() {
	local sc r w
	ref4=
	t_check "reference: pci-epc-loop (tegra234-edma) and loop-dmatest, no framelink" \
		sh -c ". /tests/lib.sh; . /tests/epc-loop-lib.sh
			t_insmod pci-epc-loop profile=tegra234-edma &&
			wait_for 50 test -d \$EP/controllers/\$EPC && t_insmod loop-dmatest" || return 1
	echo 1 >$EP/controllers/$EPC/start
	t_check "reference: link up" wait_for 100 grep -qx up $LOOPDBG/link
	echo 0 >$LOOPDBG/rate_mbps
	for sc in 65536:64 1048576:16 4194304:6; do
		r=$(bench_ref read "${sc%:*}" "${sc#*:}")
		w=$(bench_ref write "${sc%:*}" "${sc#*:}")
		echo "# reference ${sc%:*} bytes, 2 channels: read $r GB/s, write $w GB/s"
		echo "csv-ref,${sc%:*},$r,$w"
		[ "${sc%:*}" = 4194304 ] && ref4="$r $w"
	done
	rmmod loop_dmatest
	echo 0 >$EP/controllers/$EPC/start
	t_check "reference: unload" loop_unload
	echo "$ref4" >/tmp/bench-engine
	t_check "reference: measured (4 MiB: $ref4 GB/s)" \
		awk -v s="$ref4" 'BEGIN { split(s, a, " "); exit !(a[1] > 0 && a[2] > 0) }'
}
