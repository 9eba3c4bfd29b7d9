#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The init's audit of declared skips (tests/vm/lib.sh, skip_audit; issue 28 item 3) on planted
# TAP, in the VM's own shell: an undeclared skip and a declared skip that did not come each
# fail, a skip declared possible is not required, and a kselftest case (named as t_run_tap
# names it) matches a pattern; t_run_tap fails a case named with -t that has no result line.
. /tests/lib.sh

decl=/tmp/audit.declared
tap=/tmp/audit.tap
out=/tmp/audit.out
printf '%s\t%s\n' 'kselftest.p.fl.dma.*' 'no DMA channels' 'gone: *' 'never comes' >$decl
printf '%s\t%s\tpossible\n' 'race: *' 'may come' >>$decl
cat >$tap <<'TAP'
ok 3 kselftest.p.fl.dma.sizes_both_ways # SKIP endpoint has no DMA channels
ok 4 kselftest.p.fl.dma.random_sizes # SKIP endpoint has no DMA channels
ok - a check that ran
not ok - a check that failed
ok - surprise: a case # SKIP not declared
TAP
T_SKIPS=$decl skip_audit planted <$tap >$out
sed 's/^/# audit: /' $out
t_check "audit: the undeclared skip fails" \
	grep -qx 'not ok - planted: undeclared skip: surprise: a case' $out
t_check "audit: the declared skip that did not come fails" \
	grep -q '^not ok - planted: declared skip did not happen: gone: \*' $out
t_check "audit: the possible skip is not required, the matched ones pass" \
	test "$(grep -c '^not ok' $out)" -eq 2
t_check "audit: skips counted" grep -qx '# skips: 3, 2 declared' $out

# all declared, all come: no failure
printf '%s\t%s\n' 'kselftest.p.fl.dma.*' 'no DMA channels' >$decl
head -n 2 $tap | T_SKIPS=$decl skip_audit planted >$out
t_check "audit: skips as declared pass" sh -c "! grep -q '^not ok' $out"

# t_run_tap: a case named with -t must have run, one named with -T must not (a planted
# kselftest: a shell function printing TAP; its output goes to a file, not to the run's TAP)
fake_ksft() {
	echo "ok 1 global.one"
	echo "ok 2 global.two # SKIP planted"
}
t_run_tap fake fake_ksft -t one -t two >$out
t_check "t_run_tap: named cases that ran pass" test $? -eq 0
t_run_tap fake fake_ksft -t one -t three >$out
t_check "t_run_tap: a named case with no result fails" test $? -ne 0
t_check "t_run_tap: ... and says which" grep -q '^not ok - fake: three ran' $out
t_run_tap fake fake_ksft -T one >$out
t_check "t_run_tap: an excluded case that ran fails" grep -q '^not ok - fake: one excluded' $out
