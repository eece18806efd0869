package genl

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
)

// TestIntegrationDumpRace races client dumps that fit one datagram against
// a deleter that removes the dumped clients one by one, in the order the
// dump walks them, as the kernel runs both: a dump that sees a client the
// deleter removed before another one the dump misses shows a state that
// never existed. Every such dump must be caught (its generations differ),
// Clients must only ever return states that existed, and the race must
// have been caught happening at least once. Needs ib_sync_mem_sim.
func TestIntegrationDumpRace(t *testing.T) {
	c, dev := Integration(t)
	deleter, err := Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer deleter.Close()

	const (
		clients = 24 // a dump of them fits one datagram
		rounds  = 40 // at most; the rounds end once 3 saw the race
		raced   = 3
	)
	var dumps, mismatched, impossible, intrOnly, listed, racedRounds int
	for round := 0; round < rounds && racedRounds < raced; round++ {
		before := mismatched
		ids := make([]uint32, 0, clients)
		for i := range clients {
			cl, err := c.Register(bg, RegisterRequest{Device: dev, Name: fmt.Sprintf("race%d-%d", round, i),
				Kind: KindSim, Sim: &SimConfig{Latency: new(time.Duration(0))}})
			if err != nil {
				t.Fatalf("register (is ib_sync_mem_sim loaded?): %v", err)
			}
			ids = append(ids, cl.ID)
		}

		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Go(func() {
			defer close(done)
			for _, id := range ids { // ascending: the order dumps walk
				if err := deleter.Unregister(bg, id); err != nil {
					t.Errorf("unregister %d: %v", id, err)
					return
				}
			}
		})
		filter, err := encodeClientFilter(ClientFilter{Device: dev})
		if err != nil {
			t.Fatal(err)
		}
		attrs := append(filter, dumpEndAttr...)
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			msgs, v, err := c.dumpOnce("race dump", cmdClientGet, attrs)
			if err != nil {
				t.Fatal(err)
			}
			dumps++
			existed := existedDuring(t, msgs, ids)
			if !v.consistent() {
				mismatched++
			}
			if !existed {
				impossible++
				if v.consistent() {
					t.Errorf("round %d: a dump showing a state that never existed passed as consistent", round)
				}
				if !v.intr {
					intrOnly++
				}
			}
			// The public call retries: what it returns existed.
			cs, err := c.Clients(bg, ClientFilter{Device: dev})
			if err == nil {
				listed++
				got := make([]uint32, 0, len(cs))
				for _, cl := range cs {
					got = append(got, cl.ID)
				}
				if !isSuffix(got, ids) {
					t.Errorf("round %d: Clients returned %v, not a state of %v", round, got, ids)
				}
			}
		}
		wg.Wait()
		if mismatched > before {
			racedRounds++
		}
	}
	t.Logf("%d dumps, %d caught as inconsistent, %d showed a state that never existed "+
		"(%d of them without NLM_F_DUMP_INTR on any message they return); Clients answered %d times",
		dumps, mismatched, impossible, intrOnly, listed)
	if mismatched == 0 {
		t.Errorf("no dump was caught overlapping a deletion in %d dumps: the race did not happen", dumps)
	}
	if listed == 0 {
		t.Error("Clients never returned")
	}
}

// existedDuring reports whether the clients of ids a dump shows are a state
// the deleter went through: deleting ids in order, it leaves a suffix.
func existedDuring(t *testing.T, msgs []genetlink.Message, ids []uint32) bool {
	t.Helper()
	var got []uint32
	for _, m := range msgs {
		cl, err := parseClient(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cl.ID)
	}
	return isSuffix(got, ids)
}

// isSuffix reports whether the ids of all that appear in got are a suffix
// of all (got in ascending order, as dumps list them).
func isSuffix(got, all []uint32) bool {
	var ours []uint32
	for _, id := range got {
		if slices.Contains(all, id) {
			ours = append(ours, id)
		}
	}
	return slices.Equal(ours, all[len(all)-len(ours):])
}
