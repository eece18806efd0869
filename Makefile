# syncmem: the ib_sync_mem kernel module and its Go control plane.
#
#   make            modules for every installed target kernel + Go binaries,
#                   the C tools, libsyncmem (make lib) and the examples
#   make demo       boot a VM, load rxe and the module, drive it (main job)
#   make test       set up, host tier, VM tier on every kernel, summary line
#   make vm-shell   a shell in the VM with rxe0 and the module (KVER= picks)
#   make setup      install what the project needs (idempotent)
#   make debug-kernel  build the KASAN/lockdep/kmemleak kernel (once, cached)
#   make bench      benchmarks in a VM (KVER= picks the kernel), BENCHMARKS.md
#   make gate       the regression gate alone: hot paths against bench/budgets
#   make mutants    seeded defects, one at a time: which check catches each
#   make soak       the long stress runs (more fuzzing, more churn)
#   make docs-timings  the last make test's time tables into docs/testing.md

SHELL := /bin/bash
GO ?= go
GOFLAGS ?= -trimpath
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
RESULTS ?= $(CURDIR)/results
export KVER

.PHONY: all modules go genl-test generate tools examples setup debug-kernel test test-host test-vm demo vm-shell bench bench-smoke gate mutants soak two-hosts docs-timings clean

all: modules go genl-test tools lib examples

modules:
	@set -e; for k in $$(vm/kernels.sh); do \
		echo "== modules for $$k"; \
		kmod/build.sh "$$k" C=1 >/dev/null || { cat build/$$k/build.log; exit 1; }; \
	done

go:
	@mkdir -p build/bin
	$(GO) build $(GOFLAGS) -ldflags "-X main.version=$(VERSION)" \
		-o build/bin/syncmemctl ./cmd/syncmemctl
	$(GO) build $(GOFLAGS) -o build/bin/nlbench ./bench/nlbench
	$(GO) build $(GOFLAGS) -o build/bin/nlfuzz ./test/fuzz/nlfuzz
	$(GO) build $(GOFLAGS) -o build/bin/gojq github.com/itchyny/gojq/cmd/gojq

# The test binaries of pkg/genl and pkg/syncdev, for their integration
# tests against the kernel (SYNCMEM_INTEGRATION=1; run in the VM by
# test/vm/55-genl-memory.sh and test/vm/57-async.sh).
genl-test:
	@mkdir -p build/bin
	$(GO) test -c -o build/bin/genl.test ./pkg/genl
	$(GO) test -c -o build/bin/syncdev.test ./pkg/syncdev

# Regenerate pkg/trace's committed BPF object and its Go bindings (bpf2go,
# clang); pkg/trace's TestGeneratedUpToDate fails while they are stale.
generate:
	$(GO) generate ./pkg/trace/

# C test programs (test/tools, KTAP; run by test/vm/50-memory.sh).
TOOLS_CC ?= gcc
TOOLS_CFLAGS ?= -O2 -Wall -Wextra -Werror
# smnl.c and smnl_raw.c, the family's client (on the library generated from
# the YNL spec: test/tools/ynl.mk), are linked into every one of them.
TOOLS_NL := test/tools/smnl.c test/tools/smnl_raw.c
TOOLS := $(patsubst test/tools/%.c,build/bin/%,$(filter-out $(TOOLS_NL),$(wildcard test/tools/*.c)))
# The tools on libsyncmem (lib/) alone, linked with its static library
# (they run in the VM from a copy of build/bin): no smnl.c, no libynl.
TOOLS_LIBSYNCMEM := build/bin/smnlctl build/bin/lib_test
TOOLS := $(filter-out $(TOOLS_LIBSYNCMEM),$(TOOLS))
# The programs on verbs (test/tools/rcqp.h) link libibverbs.
TOOLS_VERBS := rdma_canary wire_canary train_loop inbound_bench
# The programs on io_uring link liburing (Debian's liburing-dev), statically:
# the guest of every kernel runs them.
TOOLS_URING := uring_dev lib_test

tools: $(TOOLS) $(TOOLS_LIBSYNCMEM)

# The family's C library generated from the YNL spec, for the tools.
include test/tools/ynl.mk
# libsyncmem, the C library for C and C++ callers (on the same generated
# code): make lib, make install-lib.
include lib/lib.mk

# The tools that speak the family and the ioctls raw but make their regions
# as a program does, through libsyncmem (test/tools/smlib.h).
TOOLS_SMLIB := dev_bench uring_dev unpriv_dev

build/bin/%: test/tools/%.c $(TOOLS_NL) $(wildcard test/tools/*.h) $(wildcard kmod/include/uapi/linux/*.h) \
		$(LIB_A) lib/include/syncmem.h
	@mkdir -p build/bin
	$(TOOLS_CC) $(TOOLS_CFLAGS) -Ikmod/include/uapi $(if $(filter $(TOOLS_SMLIB),$*),-Ilib/include) \
		-o $@ $< $(TOOLS_NL) $(if $(filter $(TOOLS_SMLIB),$*),$(LIB_A)) \
		$(TOOLS_LDLIBS) -lpthread $(if $(filter $(TOOLS_VERBS),$*),-libverbs) \
		$(if $(filter $(TOOLS_URING),$*),-l:liburing.a)

$(TOOLS_LIBSYNCMEM): build/bin/%: test/tools/%.c $(LIB_A) lib/include/syncmem.h
	@mkdir -p build/bin
	$(TOOLS_CC) $(TOOLS_CFLAGS) -Ilib/include -o $@ $< $(LIB_A) \
		$(if $(filter $(TOOLS_URING),$*),-l:liburing.a)

# The examples (examples/), built against libsyncmem as a program outside
# the project would be: syncmem.h, the shared library (run with
# LD_LIBRARY_PATH=build/lib until it is installed), liburing and libibverbs.
EXAMPLES := build/bin/nccl_flush
examples: $(EXAMPLES)
build/bin/nccl_flush: examples/nccl_flush.c lib/include/syncmem.h $(LIB_OUT)/libsyncmem.so
	@mkdir -p build/bin
	$(TOOLS_CC) $(TOOLS_CFLAGS) -Ilib/include -o $@ $< -L$(LIB_OUT) -lsyncmem -luring -libverbs

setup:
	@vm/setup.sh

# The man pages in docs/man, one per verb, generated from the command tree
# (cobra/doc) and committed; cmd/syncmemctl's TestManPages fails while they
# are stale, and this rewrites them.
man:
	$(GO) test ./cmd/syncmemctl -run '^TestManPages$$' -count=1 -update-man

# Install (as root): the modules through DKMS for every installed kernel
# (source in /usr/src/ib-sync-mem-$(VERSION)), syncmemctl in /usr/local/bin,
# its man pages and bash completion; uninstall undoes all of it.
# DESTDIR=<dir> installs into <dir>, DKMS trees included (packaging/install.sh).
install: go lib
	@packaging/install.sh install $(VERSION)

uninstall:
	@packaging/install.sh uninstall

# The YNL spec (spec/ib_sync_mem.yaml) against the kernel's schema and the
# UAPI header, with the kernel's tools (also part of make test's host tier).
spec-check: setup
	@test/packaging/spec-check.sh schema
	@test/packaging/spec-check.sh uapi

# The debug kernel (KASAN, lockdep, kmemleak, fault injection), built once
# per machine from linux-source-6.1 and cached outside the checkout; make
# test runs every suite on it as a third kernel. SYNCMEM_DEBUG_KERNEL=0
# leaves it out (for quick local runs; CI always has it).
debug-kernel: setup
	@vm/debug-kernel.sh >/dev/null

demo: setup all
	vm/run.sh --demo

vm-shell: setup all
	vm/run.sh --shell

# The whole suite from a bare machine (test/make-test.sh): set-up, the
# debug kernel, the build, the host tier, the VM tier on every kernel; every
# phase always runs, the summary decides and prints the time table.
test:
	@RESULTS=$(RESULTS) test/make-test.sh

# The time tables of the last make test (RESULTS) into docs/testing.md.
docs-timings:
	@test/timings.sh $(RESULTS) docs/testing.md

# Seeded defects (test/mutants): each applied alone to a copy, built, and
# only the suites it names run; RESULTS.md says which check caught it.
# Not part of make test (about two hours); make test checks the patches apply.
mutants: setup all
	@test/mutants/run.sh

# Two VMs of the newest kernel joined by a virtual wire (QEMU's socket
# network on 127.0.0.1), the suites of test/two-hosts on each.
two-hosts: setup all
	@rm -rf $(RESULTS)/two-hosts; vm/run.sh --two-hosts --results $(RESULTS); \
		test/summary.sh $(RESULTS)/two-hosts

# The long stress make test leaves out: 100 000 fuzz messages, more churn
# rounds, on every kernel (SYNCMEM_LANE=soak; KVER= picks one).
soak: setup all
	@rm -rf $(RESULTS)/soak; SYNCMEM_LANE=soak SYNCMEM_SUITES="20-core 65-fuzz 75-churn" \
		vm/run.sh --results $(RESULTS)/soak; test/summary.sh $(RESULTS)/soak

test-host: setup all
	@rm -rf $(RESULTS)/host; test/host.sh $(RESULTS)/host; test/summary.sh $(RESULTS)/host

test-vm: setup all
	@vm/run.sh --results $(RESULTS); test/summary.sh $(RESULTS)

# Benchmarks (bench/run.sh; method in BENCHMARKS.md): a full run on a quiet
# machine writes bench/results/<kver>/ and the table in BENCHMARKS.md.
# bench-smoke runs every suite once with tiny counts (make test does too,
# in the VM tier's 80-bench suite).
bench: setup all
	@bench/run.sh

bench-smoke: setup all
	@bench/run.sh --smoke

# The regression gate (bench/gate.sh), a phase of make test: the hot paths'
# instruction counts on the kernel bench/budgets names, one vCPU on QEMU's
# instruction clock, against their budgets there; fails on a figure over
# its budget by more than its margin. Results in build/gate.
gate: setup all
	@bench/gate.sh

clean:
	rm -rf build results
