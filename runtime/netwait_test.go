package runtime_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// TestMaxNetworkWaitAgainstARefusingServer drives the Go API's network-wait
// ceiling (CONTRACT §12, §15) over real loopback HTTP: the fake provider
// refuses connections (a real ECONNREFUSED before any request byte), the
// run waits for the network, and the ceiling ends recovery with
// network_wait_exceeded instead of retrying early; zero disables waiting.
// The ceiling is a Go API setter only: the source text rules out a CLI
// flag or a protocol field for it, so this is its end-to-end test.
func TestMaxNetworkWaitAgainstARefusingServer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ceiling time.Duration
		waits   int
	}{
		// One wait of at most 1 s (the first network delay, jittered in
		// [0.5 s, 1 s]); the next could start no sooner than 1 s later,
		// past the 1.2 s ceiling, so recovery stops.
		{"ceiling reached", 1200 * time.Millisecond, 1},
		{"waiting disabled", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "never"}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			fake.InjectFault(fakeprovider.FaultRefuse{}) // until Reopen: the whole test
			home := t.TempDir()
			agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			ceiling := tc.ceiling
			agent.SetMaxNetworkWait(&ceiling)
			rc, err := agent.Run(context.Background(), runtime.RunRequest{
				RunID: "run-1", Workspace: t.TempDir(), Model: "m", Prompt: "p", Tools: []string{},
				SessionDir: filepath.Join(home, "sessions"), SessionID: "netwait",
				Route: &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(fakeprovider.ModeChat)},
			})
			if err != nil {
				t.Fatal(err)
			}
			waits, retries := 0, 0
			for ev := range rc.Events() {
				switch d := ev.Data.(type) {
				case *protocol.ProviderWaitingForNetwork:
					waits++
					if d.Attempt != waits || d.DelayMS < 500 || d.DelayMS > 1000 || d.Error == "" {
						t.Errorf("provider_waiting_for_network %+v", d)
					}
				case *protocol.ProviderRetry:
					retries++
				}
			}
			res := rc.Wait()
			if res.Status != "error" || res.Error == nil || res.Error.Code != "network_wait_exceeded" {
				t.Fatalf("result %+v", res)
			}
			if waits != tc.waits || retries != 0 {
				t.Errorf("%d network waits and %d retries, want %d and 0", waits, retries, tc.waits)
			}
			if n := len(fake.Requests()); n != 0 {
				t.Errorf("the refusing server recorded %d requests", n)
			}
		})
	}
}

// fakeClock is a clock that only the run's recovery sleeps move; hook runs
// on every sleep, before the clock moves.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	hook func(d time.Duration)
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.hook != nil {
		c.hook(d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return ctx.Err()
}

// runCeiling runs one turn against baseURL under the ceiling and the fake
// clock, and returns its waits, its retries and its result.
func runCeiling(t *testing.T, clk *fakeClock, ceiling time.Duration, baseURL string) (waits, retries []any, res protocol.FinalResult) {
	t.Helper()
	home := t.TempDir()
	agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" },
		Now: clk.Now, Sleep: clk.Sleep, Jitter: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	agent.SetMaxNetworkWait(&ceiling)
	rc, err := agent.Run(context.Background(), runtime.RunRequest{
		RunID: "run-1", Workspace: t.TempDir(), Model: "m", Prompt: "p", Tools: []string{},
		SessionDir: filepath.Join(home, "sessions"), SessionID: "ceiling",
		Route: &runtime.InlineRoute{Provider: "fake", BaseURL: baseURL},
	})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range rc.Events() {
		switch d := ev.Data.(type) {
		case *protocol.ProviderWaitingForNetwork:
			waits = append(waits, *d)
		case *protocol.ProviderRetry:
			retries = append(retries, *d)
		}
	}
	return waits, retries, rc.Wait()
}

// TestMaxNetworkWaitBoundsRetryAfter: once an outage armed the ceiling, a
// server's Retry-After that does not fit what is left stops recovery at
// once with network_wait_exceeded; it is never honoured past the ceiling,
// nor cut short into an early retry. Under a fake clock: the connection is
// refused (wait 1, 500 ms), then the server answers 429 with Retry-After
// 5 s while only 2.5 s of the 3 s ceiling are left.
func TestMaxNetworkWaitBoundsRetryAfter(t *testing.T) {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "too late"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fake.InjectFault(fakeprovider.FaultRefuse{})
	fake.InjectFault(fakeprovider.FaultStatus{Code: 429, RetryAfter: "5"})
	clk := &fakeClock{now: time.Unix(1_000_000, 0)}
	reopened := false
	clk.hook = func(time.Duration) {
		if !reopened {
			reopened = true
			if err := fake.Reopen(); err != nil {
				t.Error(err)
			}
		}
	}
	waits, retries, res := runCeiling(t, clk, 3*time.Second, fake.BaseURL(fakeprovider.ModeChat))
	if res.Status != "error" || res.Error == nil || res.Error.Code != "network_wait_exceeded" {
		t.Fatalf("result %+v, want network_wait_exceeded", res)
	}
	if !strings.Contains(res.Error.Message, "max network wait reached") || !strings.Contains(res.Error.Message, "5000 ms") {
		t.Errorf("message %q", res.Error.Message)
	}
	if len(waits) != 1 || len(retries) != 0 {
		t.Errorf("waits %+v, retries %+v: want one wait and no retry", waits, retries)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d requests reached the server, want only the throttled one", n)
	}
}

// TestMaxNetworkWaitBoundsTheOpening: after an outage the next request's
// opening gets only what is left of the ceiling. The first attempt is
// refused; then the address accepts TCP connections and never answers the
// TLS handshake. With 300 ms of the 800 ms ceiling left the handshake is
// cut there, and recovery ends with network_wait_exceeded, instead of the
// transport's 10 s handshake timeout ending it as a provider_error.
func TestMaxNetworkWaitBoundsTheOpening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // refused until the first wait
	var silent net.Listener
	defer func() {
		if silent != nil {
			silent.Close()
		}
	}()
	clk := &fakeClock{now: time.Unix(1_000_000, 0)}
	clk.hook = func(time.Duration) {
		if silent != nil {
			return
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		silent = l
		go func() {
			var held []net.Conn
			defer func() {
				for _, c := range held {
					c.Close()
				}
			}()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				held = append(held, c)
			}
		}()
	}
	begin := time.Now()
	waits, retries, res := runCeiling(t, clk, 800*time.Millisecond, "https://"+addr+"/v1")
	if res.Status != "error" || res.Error == nil || res.Error.Code != "network_wait_exceeded" {
		t.Fatalf("result %+v (after %v), want network_wait_exceeded", res, time.Since(begin))
	}
	if len(waits) != 1 || len(retries) != 0 {
		t.Errorf("waits %+v, retries %+v: want one wait", waits, retries)
	}
	if took := time.Since(begin); took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("the run took %v; the opening should have been cut after 300 ms", took)
	}
}
