package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
)

// On a terminal the status is one line redrawn in place, naming the running
// tool and the retry; warnings are permanent lines; the end clears it.
func TestReporterLiveLine(t *testing.T) {
	var b bytes.Buffer
	r := newReporter(&b, true)
	clock := time.Unix(0, 0)
	r.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	ev := func(typ protocol.EventType, data protocol.Payload) { r.event(runtime.Event{Type: typ, Data: data}) }
	ev(protocol.TypeAccepted, &protocol.Accepted{Model: protocol.ModelInfo{Provider: "fake", Name: "m"}})
	ev(protocol.TypeToolStart, &protocol.ToolStart{Step: 1, Tool: "bash"})
	if last := lastDraw(b.String()); last != "octet: fake/m · step 1 · running bash · 1 tool call" {
		t.Fatalf("status while a tool runs: %q", last)
	}
	ev(protocol.TypeToolFinish, &protocol.ToolFinish{Tool: "bash", OK: true})
	ev(protocol.TypeModelStep, &protocol.ModelStep{Step: 1})
	ev(protocol.TypeProviderUsageUncertain, &protocol.ProviderUsageUncertain{})
	ev(protocol.TypeProviderRetry, &protocol.ProviderRetry{Attempt: 1, MaxAttempts: 4, DelayMS: 1500, Error: "HTTP 500"})
	if last := lastDraw(b.String()); last != "octet: fake/m · step 2 · retry 1/4 in 1.5s · 1 tool call" {
		t.Fatalf("status during a retry: %q", last)
	}
	if n := strings.Count(b.String(), "warning: usage is uncertain"); n != 1 {
		t.Fatalf("%d usage warnings", n)
	}
	r.finish(protocol.FinalResult{Status: protocol.StatusCompleted})
	if !strings.HasSuffix(b.String(), "\r\x1b[2K") {
		t.Fatalf("the live line is not cleared at the end: %q", b.String())
	}
	if strings.Count(b.String(), "\n") != 1 { // the warning only
		t.Fatalf("permanent lines: %q", b.String())
	}
}

// lastDraw is the text of the last redraw.
func lastDraw(s string) string {
	i := strings.LastIndex(s, "\r\x1b[2K")
	if i < 0 {
		return ""
	}
	return s[i+len("\r\x1b[2K"):]
}

func TestTruncate(t *testing.T) {
	if got := truncate("ab·cdef", 4); got != "ab·…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("abc", 3); got != "abc" {
		t.Errorf("truncate = %q", got)
	}
}
