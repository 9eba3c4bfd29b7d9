# SPDX-License-Identifier: GPL-2.0
# TAP helpers for the scripts in tests/vm/, sourced inside the VM (busybox sh).
# Each helper prints one TAP line; the runner counts them (scripts/tap-summary.py).

# t_mark: a result that came 5 s or more after the one before says so, as a TAP comment: the
# VM suite is make check's longest stage, and these lines show where its time goes.
# Only shell built-ins: a script may define functions named like tools (68- has cut()).
t_mark() {
	local _now _idle _last
	read -r _now _idle </proc/uptime
	_now=${_now%%.*}
	_last=$_now
	[ ! -f /tmp/.t_last ] || read -r _last </tmp/.t_last
	echo "$_now" >/tmp/.t_last
	[ $((_now - _last)) -lt 5 ] || echo "# slow: $((_now - _last)) s since the previous result"
}

# uptime_cs: the uptime in centiseconds (shell built-ins only, as t_mark)
uptime_cs() {
	local _u _r
	read -r _u _r </proc/uptime
	echo "${_u%.*}${_u#*.}"
}

# kml_scans: kmemleak's two scans, the second 6 s after the first started. kmemleak reports an
# object only at a scan that finds it unchanged since the scan before (the first records its
# checksum), and only if it was allocated MSECS_MIN_AGE (5 s) before the scan's start
# (jiffies_last_scan, mm/kmemleak.c): so the second reports everything allocated before this
# call, and the first scan (~5 s in the test kernel) runs inside that wait, not after a sleep.
kml_scans() {
	local _until
	_until=$(($(uptime_cs) + 700))
	echo scan >/sys/kernel/debug/kmemleak
	while [ "$(uptime_cs)" -lt $_until ]; do sleep 0.2; done
	echo scan >/sys/kernel/debug/kmemleak
}
t_ok() { t_mark; echo "ok - $1"; }
t_fail() { t_mark; echo "not ok - $1${2:+ # $2}"; }
t_skip() { t_mark; echo "ok - $1 # SKIP $2"; }

# t_skip_expected GLOB REASON: declare a skip this script expects (issue 28 item 3). GLOB is a
# shell pattern on the skipped result's name: t_skip's NAME, or a kselftest case as t_run_tap
# names it ("kselftest.tegra234.fl.dma.*"). After the script, the init fails it for every skip
# no declaration matches and for every declaration no skip matched (tests/vm/init,
# skip_audit). A script declares where it knows why, next to the condition that causes it.
t_skip_expected() { printf '%s\t%s\n' "$1" "$2" >>$T_SKIPS; }
# t_skip_possible GLOB REASON: a skip that may or may not come (a race the test cannot steer
# yet); the audit does not require it. Each is a test still to be made deterministic
# (Documentation/framelink.rst, "Testing").
t_skip_possible() { printf '%s\t%s\tpossible\n' "$1" "$2" >>$T_SKIPS; }

# skip_audit SCRIPT: the init's check of SCRIPT's TAP (stdin) against the skips it declared
# ($T_SKIPS), matched by name (the REASON is for the reader and the failure line, not
# compared). A skip is a result a test could not run: the script passes only if every skip
# was declared and every declared one (not marked possible) came (05-skip-audit.sh plants
# both kinds of miss).
T_SKIPS=${T_SKIPS:-/tmp/skips.declared}
skip_audit() {
	local name glob why possible _ n=0 bad=0
	sed -n 's/^ok[ 0-9]*\(- \)\{0,1\}\(.*\) # SKIP.*/\2/p' >/tmp/skips.seen
	: >/tmp/skips.hit
	while IFS= read -r name; do
		n=$((n + 1))
		while IFS='	' read -r glob _; do
			case "$name" in
			$glob) echo "$glob" >>/tmp/skips.hit; continue 2 ;;
			esac
		done <$T_SKIPS
		echo "not ok - $1: undeclared skip: $name"
		bad=$((bad + 1))
	done </tmp/skips.seen
	while IFS='	' read -r glob why possible; do
		[ -z "$possible" ] || continue
		grep -qxF -- "$glob" /tmp/skips.hit ||
			echo "not ok - $1: declared skip did not happen: $glob ($why)"
	done <$T_SKIPS
	[ $n -eq 0 ] || echo "# skips: $n, $((n - bad)) declared"
}

# t_check NAME CMD...: ok when CMD exits 0; on failure its output is shown as TAP comments.
# Returns CMD's status, so a script can stop depending on it.
t_check() {
	local _name=$1 _out _rc
	shift
	_out=$("$@" 2>&1)
	_rc=$?
	if [ $_rc -eq 0 ]; then
		t_ok "$_name"
	else
		echo "$_out" | sed 's/^/# /'
		t_fail "$_name" "exit $_rc: $*"
	fi
	return $_rc
}

# t_xfail NAME REASON CMD...: a check that fails because of a known driver defect the lab shows
# (REASON names the issue): TAP TODO either way, so tap-summary.py counts the failure as
# expected and an unexpected pass fails the run until the TODO is removed.
t_xfail() {
	local _name=$1 _why=$2 _out _rc
	shift 2
	_out=$("$@" 2>&1)
	_rc=$?
	echo "$_out" | sed 's/^/# /'
	if [ $_rc -eq 0 ]; then
		echo "ok - $_name # TODO $_why"
	else
		echo "not ok - $_name # TODO $_why"
	fi
	return $_rc
}

# t_run_tap NAME CMD...: run a program that prints its own TAP (kselftest); its top-level result
# lines are taken as they are, and a non-zero exit with no failing line is reported as one.
t_run_tap() {
	local _name=$1 _rc _a _want
	shift
	"$@" >/tmp/t_run_tap.out 2>&1
	_rc=$?
	sed -e 's/^\(not \)\{0,1\}ok [0-9]* /&'"$_name"'./' /tmp/t_run_tap.out
	if [ $_rc -ne 0 ] && ! grep -q '^not ok' /tmp/t_run_tap.out; then
		t_fail "$_name" "exited $_rc"
	fi
	# a case named with -t or -r has a result line (that it did not skip is the skip audit's
	# to judge), one named with -T (excluded) has none: a misspelt or renamed case would
	# otherwise pass as "nothing ran"
	_want=
	for _a in "$@"; do
		if [ -n "$_want" ] &&
			grep -qE "^(not )?ok [0-9]+ ([^ ]*\.)?$_a( |\$)" /tmp/t_run_tap.out; then
			if [ $_want = T ]; then t_fail "$_name: $_a excluded" "it ran"; _rc=1; fi
		elif [ "$_want" = t ]; then
			t_fail "$_name: $_a ran" "no result line for it"
			_rc=1
		fi
		case "$_a" in -t|-r) _want=t ;; -T) _want=T ;; *) _want= ;; esac
	done
	return $_rc
}

# t_insmod MODULE [PARAM=VALUE...]: /modules holds ours and the kernel's own test modules.
t_insmod() {
	local _m=$1
	shift
	insmod "/modules/$_m.ko" "$@"
}

# A leak a driver makes on purpose: it keeps DMA mappings or allocations at its release
# because the device may still use them (framelink-host when the endpoint did not stop,
# framelink-epf's slots under an importer's mapping). DMA-API debug rightly reports them
# ("pending DMA allocations while released"); between t_dma_leak_begin and t_dma_leak_end its
# reports go to a driver filter that matches no driver, and t_dma_leak_end is a check that
# dma-debug counted at least one error meanwhile: the declared leak happened. Without
# DMA-API debug both are no-ops and the check passes.
DMA_DBG=/sys/kernel/debug/dma-api
t_dma_leak_begin() {
	[ -w $DMA_DBG/driver_filter ] || return 0
	cat $DMA_DBG/error_count >/tmp/.dma_err0
	echo fl-declared-leak >$DMA_DBG/driver_filter
}
t_dma_leak_end() {
	local _e0 _e1
	[ -w $DMA_DBG/driver_filter ] || return 0
	echo >$DMA_DBG/driver_filter
	read -r _e0 </tmp/.dma_err0
	read -r _e1 <$DMA_DBG/error_count
	echo "# dma-api: $((_e1 - _e0)) declared error(s)"
	[ "$_e1" -gt "$_e0" ]
}
