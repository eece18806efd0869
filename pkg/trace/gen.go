package trace

// The BPF object and its Go bindings are generated and committed, so a
// plain `go build` needs no clang. Regenerate with `make generate` after
// changing bpf/; TestGeneratedUpToDate fails while they are stale.
//
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -type sm_hist_key -type sm_hist_val -type sm_err_key -type sm_dev_name -type sm_client_sync_rec -type sm_sync_end_rec synctrace bpf/synctrace.bpf.c -- -Wall -Werror -std=gnu11
