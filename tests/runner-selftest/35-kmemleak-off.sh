#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runner self-test: this test passes, but kmemleak switched off (a later scan would find
# nothing) must fail the run.
. /tests/lib.sh
t_check "runner-selftest: switch kmemleak off" sh -c 'echo off >/sys/kernel/debug/kmemleak'
