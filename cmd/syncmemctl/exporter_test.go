package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func fakeDial(a api) dialer { return func() (api, error) { return a, nil } }

// The command serves on --listen at --path until its context ends.
func TestExporterCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	root := newRoot(fakeDial(&fakeAPI{}))
	var stderr strings.Builder
	root.SetErr(&stderr)
	go func() { done <- serveMetrics(ctx, ln, "/m", fakeDial(&fakeAPI{}), false, root) }()
	url := "http://" + ln.Addr().String()
	var resp *http.Response
	for range 50 {
		if resp, err = http.Get(url + "/m"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "syncmem_up 1") {
		t.Errorf("GET /m lacks syncmem_up 1:\n%s", body)
	}
	if resp, err := http.Get(url + "/metrics"); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET /metrics with --path /m: %v %v, want 404", resp.StatusCode, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serveMetrics: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serveMetrics did not return after cancel")
	}
	if want := "serving metrics on " + url + "/m\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

func TestExporterFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"exporter", "--path", "metrics"}, `invalid --path "metrics": must start with /`},
		{[]string{"exporter", "--listen", "9710"}, `invalid --listen "9710"`},
		{[]string{"exporter", "extra"}, `unknown keyword "extra"`},
	} {
		r := runFake(t, &fakeAPI{}, tc.args...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want failure with %q", tc.args, r.code, r.stderr, tc.err)
		}
		if r.dials != 0 {
			t.Errorf("%v: dialed the kernel", tc.args)
		}
	}
}
