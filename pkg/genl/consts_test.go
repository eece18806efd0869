package genl

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"
)

// The UAPI header is the source of truth for the wire numbers.
const uapiHeader = "../../kmod/include/uapi/linux/ib_sync_mem.h"

// uapi pairs every constant of consts.go with its C name. The expected
// values come from parsing the header, never from this table.
var uapi = []struct {
	c, goName string
	v         int64
}{
	{"IB_SYNC_MEM_GENL_VERSION", "FamilyVersion", FamilyVersion},
	{"IB_SYNC_MEM_NAME_LEN", "NameLen", NameLen},
	{"IB_SYNC_MEM_SYNC_BATCH_MAX", "SyncBatchMax", SyncBatchMax},
	{"IB_SYNC_MEM_DEV_CLIENTS_MAX", "DevClientsMax", DevClientsMax},
	{"IB_SYNC_MEM_SYNC_TIMEOUT_MAX_MS", "SyncTimeoutMaxMS", SyncTimeoutMaxMS},

	{"IB_SYNC_MEM_CMD_UNSPEC", "cmdUnspec", int64(cmdUnspec)},
	{"IB_SYNC_MEM_CMD_DEV_GET", "cmdDevGet", int64(cmdDevGet)},
	{"IB_SYNC_MEM_CMD_CLIENT_NEW", "cmdClientNew", int64(cmdClientNew)},
	{"IB_SYNC_MEM_CMD_CLIENT_DEL", "cmdClientDel", int64(cmdClientDel)},
	{"IB_SYNC_MEM_CMD_CLIENT_GET", "cmdClientGet", int64(cmdClientGet)},
	{"IB_SYNC_MEM_CMD_SYNC", "cmdSync", int64(cmdSync)},
	{"IB_SYNC_MEM_CMD_STATS_GET", "cmdStatsGet", int64(cmdStatsGet)},
	{"IB_SYNC_MEM_CMD_CLIENT_INVALIDATED", "cmdClientInvalidated", int64(cmdClientInvalidated)},
	{"IB_SYNC_MEM_CMD_DEV_NEW", "cmdDevNew", int64(cmdDevNew)},
	{"IB_SYNC_MEM_CMD_DEV_DEL", "cmdDevDel", int64(cmdDevDel)},
	{"IB_SYNC_MEM_CMD_SYNC_FAILED", "cmdSyncFailed", int64(cmdSyncFailed)},
	{"IB_SYNC_MEM_CMD_MARK_DIRTY", "cmdMarkDirty", int64(cmdMarkDirty)},
	{"IB_SYNC_MEM_CMD_CLIENT_NEW", "EventClientNew", int64(EventClientNew)},
	{"IB_SYNC_MEM_CMD_CLIENT_DEL", "EventClientDel", int64(EventClientDel)},
	{"IB_SYNC_MEM_CMD_CLIENT_INVALIDATED", "EventClientInvalidated", int64(EventClientInvalidated)},
	{"IB_SYNC_MEM_CMD_DEV_NEW", "EventDevNew", int64(EventDevNew)},
	{"IB_SYNC_MEM_CMD_DEV_DEL", "EventDevDel", int64(EventDevDel)},
	{"IB_SYNC_MEM_CMD_SYNC_FAILED", "EventSyncFailed", int64(EventSyncFailed)},

	{"IB_SYNC_MEM_A_UNSPEC", "attrUnspec", int64(attrUnspec)},
	{"IB_SYNC_MEM_A_PAD", "attrPad", int64(attrPad)},
	{"IB_SYNC_MEM_A_DEV_INDEX", "attrDevIndex", int64(attrDevIndex)},
	{"IB_SYNC_MEM_A_DEV_NAME", "attrDevName", int64(attrDevName)},
	{"IB_SYNC_MEM_A_DEV_CLIENTS", "attrDevClients", int64(attrDevClients)},
	{"IB_SYNC_MEM_A_DEV_PASSES", "attrDevPasses", int64(attrDevPasses)},
	{"IB_SYNC_MEM_A_CLIENT_ID", "attrClientID", int64(attrClientID)},
	{"IB_SYNC_MEM_A_CLIENT_NAME", "attrClientName", int64(attrClientName)},
	{"IB_SYNC_MEM_A_CLIENT_KIND", "attrClientKind", int64(attrClientKind)},
	{"IB_SYNC_MEM_A_CLIENT_FLAGS", "attrClientFlags", int64(attrClientFlags)},
	{"IB_SYNC_MEM_A_CLIENT_STATE", "attrClientState", int64(attrClientState)},
	{"IB_SYNC_MEM_A_CLIENT_INVAL_REASON", "attrClientInvalReason", int64(attrClientInvalReason)},
	{"IB_SYNC_MEM_A_CLIENT_ORIGIN", "attrClientOrigin", int64(attrClientOrigin)},
	{"IB_SYNC_MEM_A_CLIENT_SIZE", "attrClientSize", int64(attrClientSize)},
	{"IB_SYNC_MEM_A_CLIENT_LAST_ERR", "attrClientLastErr", int64(attrClientLastErr)},
	{"IB_SYNC_MEM_A_CLIENT_OWNER_PORTID", "attrClientOwnerPortID", int64(attrClientOwnerPortID)},
	{"IB_SYNC_MEM_A_CLIENT_OWNER_PID", "attrClientOwnerPID", int64(attrClientOwnerPID)},
	{"IB_SYNC_MEM_A_CLIENT_INFO", "attrClientInfo", int64(attrClientInfo)},
	{"IB_SYNC_MEM_A_SIM", "attrSim", int64(attrSim)},
	{"IB_SYNC_MEM_A_SYNC_DIR", "attrSyncDir", int64(attrSyncDir)},
	{"IB_SYNC_MEM_A_SYNC_TIMEOUT_MS", "attrSyncTimeoutMS", int64(attrSyncTimeoutMS)},
	{"IB_SYNC_MEM_A_SYNC_CLIENTS", "attrSyncClients", int64(attrSyncClients)},
	{"IB_SYNC_MEM_A_SYNC_ERR", "attrSyncErr", int64(attrSyncErr)},
	{"IB_SYNC_MEM_A_SYNC_RUN", "attrSyncRun", int64(attrSyncRun)},
	{"IB_SYNC_MEM_A_SYNC_ERRORS", "attrSyncErrors", int64(attrSyncErrors)},
	{"IB_SYNC_MEM_A_SYNC_SKIPPED", "attrSyncSkipped", int64(attrSyncSkipped)},
	{"IB_SYNC_MEM_A_SYNC_NS", "attrSyncNS", int64(attrSyncNS)},
	{"IB_SYNC_MEM_A_SYNC_RESULTS", "attrSyncResults", int64(attrSyncResults)},
	{"IB_SYNC_MEM_A_SYNC_RESULT", "attrSyncResult", int64(attrSyncResult)},
	{"IB_SYNC_MEM_A_STATS", "attrStats", int64(attrStats)},
	{"IB_SYNC_MEM_A_REGION", "attrRegion", int64(attrRegion)},
	{"IB_SYNC_MEM_A_DMABUF", "attrDMABuf", int64(attrDMABuf)},
	{"IB_SYNC_MEM_A_CLIENT_PINNED_PAGES", "attrClientPinnedPages", int64(attrClientPinnedPages)},
	{"IB_SYNC_MEM_A_GENERATION", "attrGeneration", int64(attrGeneration)},
	{"IB_SYNC_MEM_A_DUMP_END", "attrDumpEnd", int64(attrDumpEnd)},
	{"IB_SYNC_MEM_A_END_GENERATION", "attrEndGeneration", int64(attrEndGeneration)},
	{"IB_SYNC_MEM_A_CLIENT_OWNER", "attrClientOwner", int64(attrClientOwner)},
	{"IB_SYNC_MEM_A_SYNC_OFFSET", "attrSyncOffset", int64(attrSyncOffset)},
	{"IB_SYNC_MEM_A_SYNC_LEN", "attrSyncLen", int64(attrSyncLen)},

	{"IB_SYNC_MEM_A_BATCH_CLIENT_ID", "batchClientID", int64(batchClientID)},

	{"IB_SYNC_MEM_A_STATS_UNSPEC", "statsUnspec", int64(statsUnspec)},
	{"IB_SYNC_MEM_A_STATS_PAD", "statsPad", int64(statsPad)},
	{"IB_SYNC_MEM_A_STATS_SYNCS", "statsSyncs", int64(statsSyncs)},
	{"IB_SYNC_MEM_A_STATS_ERRORS", "statsErrors", int64(statsErrors)},
	{"IB_SYNC_MEM_A_STATS_NS", "statsNS", int64(statsNS)},
	{"IB_SYNC_MEM_A_STATS_MAX_NS", "statsMaxNS", int64(statsMaxNS)},
	{"IB_SYNC_MEM_A_STATS_BYTES", "statsBytes", int64(statsBytes)},
	{"IB_SYNC_MEM_A_STATS_HIST", "statsHist", int64(statsHist)},
	{"IB_SYNC_MEM_A_STATS_CLIENTS", "statsClients", int64(statsClients)},

	{"IB_SYNC_MEM_A_HIST_UNSPEC", "histUnspec", int64(histUnspec)},
	{"IB_SYNC_MEM_A_HIST_PAD", "histPad", int64(histPad)},
	{"IB_SYNC_MEM_A_HIST_SLOT", "histSlot", int64(histSlot)},
	{"IB_SYNC_MEM_A_HIST_LOG2", "histLog2", int64(histLog2)},
	{"IB_SYNC_MEM_A_HIST_COUNT", "histCount", int64(histCount)},

	{"IB_SYNC_MEM_A_SIM_UNSPEC", "simUnspec", int64(simUnspec)},
	{"IB_SYNC_MEM_A_SIM_PAD", "simPad", int64(simPad)},
	{"IB_SYNC_MEM_A_SIM_LATENCY_US", "simLatencyUS", int64(simLatencyUS)},
	{"IB_SYNC_MEM_A_SIM_FAIL_NEXT", "simFailNext", int64(simFailNext)},
	{"IB_SYNC_MEM_A_SIM_FAIL_ERRNO", "simFailErrno", int64(simFailErrno)},
	{"IB_SYNC_MEM_A_SIM_SIZE", "simSize", int64(simSize)},
	{"IB_SYNC_MEM_A_SIM_BATCH", "simBatch", int64(simBatch)},
	{"IB_SYNC_MEM_A_SIM_CALLS_TO_DEVICE", "simCallsToDevice", int64(simCallsToDevice)},
	{"IB_SYNC_MEM_A_SIM_CALLS_TO_CPU", "simCallsToCPU", int64(simCallsToCPU)},
	{"IB_SYNC_MEM_A_SIM_CALLS_BIDIRECTIONAL", "simCallsBidirectional", int64(simCallsBidirectional)},
	{"IB_SYNC_MEM_A_SIM_CALLS_INBOUND", "simCallsInbound", int64(simCallsInbound)},
	{"IB_SYNC_MEM_A_SIM_ADDR", "simAddr", int64(simAddr)},

	{"IB_SYNC_MEM_A_REGION_UNSPEC", "regionUnspec", int64(regionUnspec)},
	{"IB_SYNC_MEM_A_REGION_PAD", "regionPad", int64(regionPad)},
	{"IB_SYNC_MEM_A_REGION_ADDR", "regionAddr", int64(regionAddr)},
	{"IB_SYNC_MEM_A_REGION_LEN", "regionLen", int64(regionLen)},
	{"IB_SYNC_MEM_A_REGION_ACCESS", "regionAccess", int64(regionAccess)},
	{"IB_SYNC_MEM_A_REGION_SEGMENTS", "regionSegments", int64(regionSegments)},
	{"IB_SYNC_MEM_REGION_F_WRITE", "RegionWrite", int64(RegionWrite)},

	{"IB_SYNC_MEM_A_DMABUF_UNSPEC", "dmabufUnspec", int64(dmabufUnspec)},
	{"IB_SYNC_MEM_A_DMABUF_PAD", "dmabufPad", int64(dmabufPad)},
	{"IB_SYNC_MEM_A_DMABUF_FD", "dmabufFD", int64(dmabufFD)},
	{"IB_SYNC_MEM_A_DMABUF_SIZE", "dmabufSize", int64(dmabufSize)},
	{"IB_SYNC_MEM_A_DMABUF_EXPORTER", "dmabufExporter", int64(dmabufExporter)},
	{"IB_SYNC_MEM_A_DMABUF_INODE", "dmabufInode", int64(dmabufInode)},

	{"IB_SYNC_MEM_SYNC_TO_DEVICE", "DirToDevice", int64(DirToDevice)},
	{"IB_SYNC_MEM_SYNC_TO_CPU", "DirToCPU", int64(DirToCPU)},
	{"IB_SYNC_MEM_SYNC_BIDIRECTIONAL", "DirBidirectional", int64(DirBidirectional)},
	{"IB_SYNC_MEM_SYNC_INBOUND", "DirInbound", int64(DirInbound)},
	{"IB_SYNC_MEM_KIND_KERNEL", "KindKernel", int64(KindKernel)},
	{"IB_SYNC_MEM_KIND_SIM", "KindSim", int64(KindSim)},
	{"IB_SYNC_MEM_KIND_REGION", "KindRegion", int64(KindRegion)},
	{"IB_SYNC_MEM_KIND_DMABUF", "KindDMABuf", int64(KindDMABuf)},
	{"IB_SYNC_MEM_CLIENT_F_LAZY", "FlagLazy", int64(FlagLazy)},
	{"IB_SYNC_MEM_CLIENT_F_OWNED", "FlagOwned", int64(FlagOwned)},
	{"IB_SYNC_MEM_CLIENT_F_FILE", "FlagFile", int64(FlagFile)},
	{"IB_SYNC_MEM_CLIENT_LIVE", "StateLive", int64(StateLive)},
	{"IB_SYNC_MEM_CLIENT_INVALIDATED", "StateInvalidated", int64(StateInvalidated)},
	{"IB_SYNC_MEM_INVAL_REASON_DEVICE", "ReasonDevice", int64(ReasonDevice)},
	{"IB_SYNC_MEM_INVAL_REASON_MEMORY", "ReasonMemory", int64(ReasonMemory)},
	{"IB_SYNC_MEM_ORIGIN_KERNEL", "OriginKernel", int64(OriginKernel)},
	{"IB_SYNC_MEM_ORIGIN_NETLINK", "OriginNetlink", int64(OriginNetlink)},
	{"IB_SYNC_MEM_ORIGIN_DEVICE", "OriginDevice", int64(OriginDevice)},
}

var uapiStrings = []struct{ c, goName, v string }{
	{"IB_SYNC_MEM_GENL_NAME", "FamilyName", FamilyName},
	{"IB_SYNC_MEM_GENL_MCGRP_EVENTS", "EventsGroup", EventsGroup},
}

// derived reports header names that need no Go constant: the
// __X_MAX / X_MAX bounds of an enum and the include guard.
func derived(name string) bool {
	return strings.HasSuffix(name, "_MAX") || strings.HasPrefix(name, "_UAPI_")
}

// TestUAPIHeader checks every Go constant against the value parsed from
// the C header, and that every enum member and #define of the header has
// a Go constant.
func TestUAPIHeader(t *testing.T) {
	text, err := os.ReadFile(uapiHeader)
	if err != nil {
		t.Fatalf("the UAPI header is the source of truth: %v", err)
	}
	h, err := parseCHeader(string(text))
	if err != nil {
		t.Fatalf("parse %s: %v", uapiHeader, err)
	}
	if len(h.enums) == 0 || len(h.enums) != h.nenums {
		t.Fatalf("parsed %d of the %d enums of %s", len(h.enums), h.nenums, uapiHeader)
	}

	covered := map[string]bool{}
	for _, c := range uapi {
		covered[c.c] = true
		want, ok := h.ints[c.c]
		switch {
		case !ok:
			t.Errorf("%s: %s is not in the header", c.goName, c.c)
		case c.v != want:
			t.Errorf("%s = %d, but the header has %s = %d", c.goName, c.v, c.c, want)
		}
	}
	for _, c := range uapiStrings {
		covered[c.c] = true
		if want, ok := h.strs[c.c]; !ok || c.v != want {
			t.Errorf("%s = %q, but the header has %s = %q", c.goName, c.v, c.c, want)
		}
	}

	var names []string
	for _, members := range h.enums {
		names = append(names, members...)
	}
	names = append(names, h.defines...)
	sort.Strings(names)
	for _, n := range names {
		if !covered[n] && !derived(n) {
			t.Errorf("%s has no Go constant in consts.go (and no entry in the uapi table)", n)
		}
	}
}

// TestAttrNames: the names describeAttr gives request attributes are the
// header's, checked by value.
func TestAttrNames(t *testing.T) {
	text, err := os.ReadFile(uapiHeader)
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseCHeader(string(text))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(infos map[uint16]attrInfo)
	walk = func(infos map[uint16]attrInfo) {
		for typ, info := range infos {
			c := "IB_SYNC_MEM_A_" + info.name
			if v, ok := h.ints[c]; !ok || v != int64(typ) {
				t.Errorf("attribute %d is named %s, but the header has %s = %d (defined %v)", typ, info.name, c, v, ok)
			}
			walk(info.nested)
		}
	}
	walk(requestAttrs)
}

// TestConstsChecked: every constant declared in consts.go is in the table
// TestUAPIHeader checks.
func TestConstsChecked(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "consts.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, c := range uapi {
		checked[c.goName] = true
	}
	for _, c := range uapiStrings {
		checked[c.goName] = true
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for _, id := range vs.Names {
			n++
			if !checked[id.Name] {
				t.Errorf("consts.go: %s is not checked against the header", id.Name)
			}
		}
		return true
	})
	if n == 0 {
		t.Fatal("no constants found in consts.go")
	}
}
