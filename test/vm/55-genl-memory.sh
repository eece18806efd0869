#!/usr/bin/env bash
# Region clients through the Go library: pkg/genl's integration tests
# (pkg/genl/integration_test.go, built into build/bin/genl.test by
# `make genl-test`) run against the real module: AllocRegion, RegisterRegion,
# syncs both ways, munmap invalidating the client (reason memory, pages
# unpinned, syncs failing with ENXIO), events, owned clients dying with
# their connection; and client dumps raced against deletions, every dump
# that shows a state that never existed caught by its generations
# (TestIntegrationDumpRace, with sim clients); marks and range syncs of a
# lazy sim client, the bytes each one counts (TestIntegrationMarkDirty).
# Each Go test and subtest becomes one result here.
#
# A missing binary, a crash or a timeout, a test started without a result,
# no test run at all, or a skipped test (the tests must run here, never
# skip) is a failure.
. "$(dirname "$0")/lib.sh"
suite_begin

check "load ib_sync_mem" sm_load
check "load ib_sync_mem_sim" sim_load
check "rxe0 attached" has_device rxe0
run_go_tests genl "$SYNCMEM_BIN/genl.test"
no_client_left "counters_zero: no client left behind" || unregister_all >&2
check "rmmod ib_sync_mem_sim" sim_unload
check "rmmod ib_sync_mem" sm_unload
finish
