# syncmem: the ib_sync_mem kernel module and its Go control plane.
#
#   make            modules for every installed target kernel + Go binaries
#   make demo       boot a VM, load rxe and the module, drive it (main job)
#   make test       set up, host tier, VM tier on every kernel, summary line
#   make vm-shell   a shell in the VM with rxe0 and the module (KVER= picks)
#   make setup      install what the project needs (idempotent)

SHELL := /bin/bash
GO ?= go
GOFLAGS ?= -trimpath
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
RESULTS ?= $(CURDIR)/results
export KVER

.PHONY: all modules go setup test test-host test-vm demo vm-shell clean

all: modules go

modules:
	@set -e; for k in $$(vm/kernels.sh); do \
		echo "== modules for $$k"; \
		kmod/build.sh "$$k" >/dev/null || { cat build/$$k/build.log; exit 1; }; \
	done

go:
	@mkdir -p build/bin
	$(GO) build $(GOFLAGS) -ldflags "-X main.version=$(VERSION)" \
		-o build/bin/syncmemctl ./cmd/syncmemctl

setup:
	@vm/setup.sh

demo: setup all
	vm/run.sh --demo

vm-shell: setup all
	vm/run.sh --shell

# The whole suite: every tier always runs, the summary decides.
test: setup
	@rm -rf $(RESULTS); mkdir -p $(RESULTS)
	@$(MAKE) --no-print-directory all
	@echo "== host tier"; test/host.sh $(RESULTS)/host || true
	@echo "== VM tier"; vm/run.sh --results $(RESULTS) || true
	@echo "== summary"; test/summary.sh $(RESULTS)

test-host: setup all
	@rm -rf $(RESULTS)/host; test/host.sh $(RESULTS)/host; test/summary.sh $(RESULTS)/host

test-vm: setup all
	@vm/run.sh --results $(RESULTS); test/summary.sh $(RESULTS)

clean:
	rm -rf build results
