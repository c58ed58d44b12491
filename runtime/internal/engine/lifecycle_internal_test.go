package engine

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"octet.dev/host/fsm/recovery"
	"octet.dev/host/protocol"
)

// TestReadinessState classifies the servers' answers (lifecycle.go): the
// shapes llama.cpp, Ollama and Hugging Face send while loading or busy,
// and the look-alikes that are ordinary failures.
func TestReadinessState(t *testing.T) {
	status := func(code int, msg string) recovery.Facts {
		return recovery.Facts{Kind: recovery.FailHTTPStatus, Status: code, Message: msg, RequestWritten: true}
	}
	withCode := func(f recovery.Facts, code string) recovery.Facts { f.Code = code; return f }
	for _, tc := range []struct {
		name string
		f    recovery.Facts
		want string
	}{
		{"llama.cpp loading", withCode(status(503, "Loading model"), "503"), protocol.LifecycleLoading},
		{"loading, other case and a period", status(503, "loading model."), protocol.LifecycleLoading},
		{"ollama runner loading", status(500, "unexpected server status: llm server loading model"), protocol.LifecycleLoading},
		{"ollama runner loading on 503", status(503, "unexpected server status: llm server loading model"), protocol.LifecycleLoading},
		{"hugging face loading", status(503, "Model org/some-7b is currently loading"), protocol.LifecycleLoading},
		{"model is loading", status(503, "The model is loading, try again shortly"), protocol.LifecycleLoading},
		{"ollama queue full", status(503, "server busy, please try again.  maximum pending requests exceeded"), protocol.LifecycleQueued},
		{"ollama no slots", status(503, "unexpected server status: llm busy - no slots available"), protocol.LifecycleQueued},
		{"llama.cpp no slot", withCode(status(503, "no slot available"), "503"), protocol.LifecycleQueued},
		{"429 queue", status(429, "Request queue is full"), protocol.LifecycleQueued},
		{"busy in the code", withCode(status(429, "Too many requests"), "server_busy"), protocol.LifecycleQueued},

		{"failed load is a failure", status(500, "llama runner process has terminated: error loading model: out of memory"), ""},
		{"failed load on 503", status(503, "failed to load model"), ""},
		{"plain 500 with loading words", status(500, "Loading model"), ""},
		{"openai 503", status(503, "The server is overloaded or not ready yet."), ""},
		{"rate limit", status(429, "Rate limit reached for requests"), ""},
		{"quota with busy words", withCode(status(429, "busy: you exceeded your current quota"), "insufficient_quota"), ""},
		{"busy on 500", status(500, "server busy"), ""},
		{"busy on 400", status(400, "queue parameter invalid"), ""},
		{"error event", recovery.Facts{Kind: recovery.FailErrorEvent, Status: 503, Message: "Loading model", RequestWritten: true}, ""},
		{"after content", recovery.Facts{Kind: recovery.FailHTTPStatus, Status: 503, Message: "Loading model", RequestWritten: true, ContentStarted: true}, ""},
		{"cut", recovery.Facts{Kind: recovery.FailStreamCut, Message: "Loading model", RequestWritten: true}, ""},
	} {
		if got := readinessState(tc.f); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestLifecycleDetail: the detail is the status and the server's words,
// valid UTF-8 without control characters, at most 256 bytes.
func TestLifecycleDetail(t *testing.T) {
	if got := lifecycleDetail(503, "Loading model"); got != "HTTP 503: Loading model" {
		t.Errorf("detail %q", got)
	}
	long := "model is loading\x00\x1b[31m\u0085 " + strings.Repeat("é", 300) + "\xff"
	got := lifecycleDetail(503, long)
	if len(got) > maxLifecycleDetail || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Fatalf("detail of %d bytes, valid %v: %q", len(got), utf8.ValidString(got), got)
	}
	for _, r := range got {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			t.Fatalf("control character %U in %q", r, got)
		}
	}
}

// TestReadinessBounds: waits of 250 ms doubling to 5 s, a Retry-After
// instead when the server sends one, and never past the ceiling.
func TestReadinessBounds(t *testing.T) {
	var r readiness
	loading := recovery.Facts{Kind: recovery.FailHTTPStatus, Status: 503, Message: "Loading model"}
	var got []time.Duration
	for range 7 {
		d, ok := r.next(loading)
		if !ok {
			t.Fatal("the ceiling came early")
		}
		got = append(got, d)
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	withRetryAfter := loading
	withRetryAfter.RetryAfterMS = 12000
	if d, ok := r.next(withRetryAfter); !ok || d != 12*time.Second {
		t.Errorf("Retry-After: %v %v", d, ok)
	}
	for {
		if _, ok := r.next(loading); !ok {
			break
		}
	}
	if r.waited > maxReadinessWait || r.waited < maxReadinessWait-readinessMaxDelay {
		t.Errorf("waited %v in all, ceiling %v", r.waited, maxReadinessWait)
	}
	withRetryAfter.RetryAfterMS = maxReadinessWait.Milliseconds() + 1
	if _, ok := (&readiness{}).next(withRetryAfter); ok {
		t.Error("a Retry-After past the ceiling started a wait")
	}
}
