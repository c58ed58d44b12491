package copilot

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"octet.dev/host/runtime/internal/copilot/copilottest"
)

type seen struct {
	mu  sync.Mutex
	hdr []http.Header
}

func (s *seen) add(h http.Header) { s.mu.Lock(); s.hdr = append(s.hdr, h.Clone()); s.mu.Unlock() }

func inferenceWorld(t *testing.T, answer func(n int64, rw http.ResponseWriter)) (*Provider, *atomic.Int64, *atomic.Int64, *seen) {
	w, c := copilottest.NewWorld(t), copilottest.NewClock()
	var ex, n atomic.Int64
	w.Handle("api.github.com", "/copilot_internal/v2/token", func(rw http.ResponseWriter, r *http.Request) {
		tokenHandler(&ex, fmt.Sprintf("%s%d", canarySession, ex.Load()), 1500, "")(rw, r)
	})
	s := &seen{}
	w.Handle("api.githubcopilot.com", "/chat/completions", func(rw http.ResponseWriter, r *http.Request) {
		s.add(r.Header)
		io.Copy(io.Discard, r.Body)
		answer(n.Add(1), rw)
	})
	return newProvider(w, newMemHost(), c), &ex, &n, s
}

func post(t *testing.T, p *Provider, ctx context.Context, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.githubcopilot.com/chat/completions", strings.NewReader(body))
	resp, err := p.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const userBody = `{"model":"gpt-4o","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`

func TestInference401OnceRetriesOnce(t *testing.T) {
	p, ex, n, s := inferenceWorld(t, func(n int64, rw http.ResponseWriter) {
		if n == 1 {
			rw.WriteHeader(401)
			io.WriteString(rw, `{"error":{"message":"unauthorized: token expired"}}`)
			return
		}
		io.WriteString(rw, "data: {}\n\n")
	})
	st, _ := post(t, p, context.Background(), userBody)
	if st != 200 || ex.Load() != 2 || n.Load() != 2 {
		t.Fatalf("status %d, %d exchanges, %d requests", st, ex.Load(), n.Load())
	}
	if s.hdr[0].Get("Authorization") == s.hdr[1].Get("Authorization") {
		t.Fatal("the retry reused the refused session")
	}
}

func TestInference401TwiceIsHandedBack(t *testing.T) {
	p, ex, n, _ := inferenceWorld(t, func(n int64, rw http.ResponseWriter) { rw.WriteHeader(401) })
	if st, _ := post(t, p, context.Background(), userBody); st != 401 || ex.Load() != 2 || n.Load() != 2 {
		t.Fatalf("status %d, %d exchanges, %d requests", st, ex.Load(), n.Load())
	}
}

func TestInferenceAfterPartialStreamNotRetried(t *testing.T) {
	p, ex, n, _ := inferenceWorld(t, func(n int64, rw http.ResponseWriter) {
		io.WriteString(rw, "data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\n")
		rw.(http.Flusher).Flush()
		io.WriteString(rw, "data: {\"error\":{\"message\":\"unauthorized\",\"code\":\"401\"}}\n\n")
	})
	st, body := post(t, p, context.Background(), userBody)
	if st != 200 || !strings.Contains(body, "par") || ex.Load() != 1 || n.Load() != 1 {
		t.Fatalf("status %d, %d exchanges, %d requests", st, ex.Load(), n.Load())
	}
}

func TestInferenceDeterministic4xxNotRetried(t *testing.T) {
	for _, st := range []int{400, 402, 403, 422, 429, 466} {
		p2, _, n2, _ := inferenceWorld(t, func(_ int64, rw http.ResponseWriter) {
			rw.Header().Set("Retry-After", "12")
			rw.WriteHeader(st)
			io.WriteString(rw, `{"error":{"message":"missing Editor-Version header for IDE auth","code":"quota_exceeded"}}`)
		})
		got, _ := post(t, p2, context.Background(), userBody)
		if got != st || n2.Load() != 1 {
			t.Fatalf("HTTP %d: status %d after %d requests", st, got, n2.Load())
		}
	}
}

func TestInferenceHeaders(t *testing.T) {
	p, _, _, s := inferenceWorld(t, func(_ int64, rw http.ResponseWriter) { io.WriteString(rw, "data: {}\n\n") })
	bodies := []struct {
		body      string
		ctx       context.Context
		vision    bool
		initiator string
	}{
		{userBody, context.Background(), false, "user"},
		{`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[]},{"role":"tool","content":"r"}]}`, context.Background(), false, "agent"},
		{`{"messages":[{"role":"user","content":[{"type":"text","text":"what is this"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`, context.Background(), true, "user"},
		{`{"messages":[{"role":"user","content":"the word \"type\":\"image_url\" in text"}]}`, context.Background(), false, "user"},
		{`{"input":[{"role":"user","content":[{"type":"input_text","text":"x"}]},{"type":"function_call_output","output":"y"},{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA=="}]}]}`, context.Background(), true, "user"},
		{userBody, WithInitiator(context.Background(), InitiatorAgent), false, "agent"},
	}
	for _, b := range bodies {
		if st, _ := post(t, p, b.ctx, b.body); st != 200 {
			t.Fatal(st)
		}
	}
	for i, b := range bodies {
		h := s.hdr[i]
		if v := h.Get("Copilot-Vision-Request"); (v == "true") != b.vision || (!b.vision && v != "") {
			t.Errorf("body %d: Copilot-Vision-Request %q", i, v)
		}
		if h.Get("X-Initiator") != b.initiator {
			t.Errorf("body %d: X-Initiator %q", i, h.Get("X-Initiator"))
		}
		if !strings.HasPrefix(h.Get("Authorization"), "Bearer "+canarySession) || strings.Contains(h.Get("Authorization"), canaryGitHub) {
			t.Errorf("body %d: Authorization is not the session", i)
		}
		if h.Get("Editor-Version") != testIdentity.EditorVersion || h.Get("Editor-Plugin-Version") != testIdentity.EditorPluginVersion ||
			h.Get("Copilot-Integration-Id") != testIdentity.IntegrationID || h.Get("User-Agent") != testIdentity.UserAgent {
			t.Errorf("body %d: identity headers %v", i, h)
		}
		if len(h.Get("X-Request-Id")) != 36 || (i > 0 && h.Get("X-Request-Id") == s.hdr[i-1].Get("X-Request-Id")) {
			t.Errorf("body %d: X-Request-Id %q", i, h.Get("X-Request-Id"))
		}
	}
}
