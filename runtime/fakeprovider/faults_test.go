package fakeprovider

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threeTurns is a script whose turns are told apart by their text.
var threeTurns = Script{Turns: []Turn{
	{Text: "alpha beta gamma delta epsilon zeta eta theta", Usage: Usage{Input: 9, Output: 8}},
	{Text: "second"},
	{Text: "third"},
}}

// expectTurn checks that the next request of mode gets the whole turn with
// the given text.
func expectTurn(t *testing.T, c *http.Client, s *Server, mode Mode, text string) {
	t.Helper()
	resp := send(t, c, s, mode, requestBody(mode, "m"))
	got := summarize(t, mode, readAll(t, resp))
	if resp.StatusCode != http.StatusOK || got.Text != text || !got.Terminal {
		t.Errorf("%s: status %d, text %q (want %q), terminal %v", mode, resp.StatusCode, got.Text, text, got.Terminal)
	}
}

func TestFaultStatus(t *testing.T) {
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			s := newServer(t, threeTurns)
			c := newClient(t)
			s.InjectFault(FaultStatus{Code: 429, RetryAfter: "2", RetryAfterMS: "1500"})
			s.InjectFault(FaultStatus{Code: 529})
			s.InjectFault(FaultStatus{Code: 502, Body: "<html>Bad gateway</html>"})

			resp := send(t, c, s, mode, requestBody(mode, "m"))
			body := readAll(t, resp)
			if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Retry-After-Ms") != "1500" {
				t.Errorf("429: status %d, headers %v", resp.StatusCode, resp.Header)
			}
			var env map[string]any
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatalf("429 body: %v: %s", err, body)
			}
			if mode == ModeAnthropic {
				if env["type"] != "error" || at(env, "error", "type") != "rate_limit_error" || resp.Header.Get("Request-Id") == "" {
					t.Errorf("Anthropic 429 envelope: %s (request-id %q)", body, resp.Header.Get("Request-Id"))
				}
			} else if at(env, "error", "code") != "rate_limit_exceeded" || resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("OpenAI 429 envelope: %s", body)
			}

			resp = send(t, c, s, mode, requestBody(mode, "m"))
			body = readAll(t, resp)
			if resp.StatusCode != 529 || resp.Header.Get("Retry-After") != "" {
				t.Errorf("529: %d %v", resp.StatusCode, resp.Header)
			}
			if mode == ModeAnthropic && !strings.Contains(string(body), `"overloaded_error"`) {
				t.Errorf("Anthropic 529 body: %s", body)
			}

			resp = send(t, c, s, mode, requestBody(mode, "m"))
			body = readAll(t, resp)
			if resp.StatusCode != 502 || string(body) != "<html>Bad gateway</html>" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
				t.Errorf("502 with a body: %d %q %q", resp.StatusCode, body, resp.Header.Get("Content-Type"))
			}

			// The faulted requests consumed no turn.
			expectTurn(t, c, s, mode, threeTurns.Turns[0].Text)
			faults := []string{}
			for _, r := range s.Requests() {
				faults = append(faults, r.Fault)
			}
			if strings.Join(faults, ",") != "status(429),status(529),status(502)," {
				t.Errorf("Request.Fault: %q", faults)
			}
		})
	}
}

func TestFaultResetAfterHeaders(t *testing.T) {
	s := newServer(t, threeTurns)
	c := newClient(t)
	s.InjectFault(FaultResetAfterHeaders{})
	resp := send(t, c, s, ModeAnthropic, requestBody(ModeAnthropic, "m"))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("headers: %d %v", resp.StatusCode, resp.Header)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(b) != 0 || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("body read: %q, %v; want no bytes and ECONNRESET", b, err)
	}
	expectTurn(t, c, s, ModeAnthropic, threeTurns.Turns[0].Text)
}

func TestFaultCutMidStream(t *testing.T) {
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			s := newServer(t, threeTurns)
			c := newClient(t)
			s.InjectFault(FaultCutMidStream{AfterEvents: 3})
			s.InjectFault(FaultCutMidStream{AfterEvents: 2, Graceful: true})
			s.InjectFault(FaultCutMidStream{AfterEvents: 1000})

			resp := send(t, c, s, mode, requestBody(mode, "m"))
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("abrupt cut: read error %v, want unexpected EOF", err)
			}
			if evs := parseSSE(t, b); len(evs) != 3 {
				t.Errorf("abrupt cut: %d events, want 3", len(evs))
			}

			resp = send(t, c, s, mode, requestBody(mode, "m"))
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || len(parseSSE(t, b)) != 2 {
				t.Errorf("graceful cut: error %v, %d events, want nil and 2", err, len(parseSSE(t, b)))
			}

			// A count past the end still withholds the terminal event.
			resp = send(t, c, s, mode, requestBody(mode, "m"))
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if sum := summarize(t, mode, b); sum.Terminal || sum.Text != threeTurns.Turns[0].Text {
				t.Errorf("cut after 1000: terminal %v, text %q", sum.Terminal, sum.Text)
			}
			if mode == ModeChat && strings.Contains(string(b), "[DONE]") {
				t.Error("chat cut sent [DONE]")
			}

			expectTurn(t, c, s, mode, threeTurns.Turns[0].Text)
			expectTurn(t, c, s, mode, "second")
		})
	}
}

// readEvents reads from r until n events have arrived.
func readEvents(t *testing.T, r *bufio.Reader, n int) {
	t.Helper()
	for seen := 0; seen < n; {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d events: %v", seen, err)
		}
		if line == "\n" {
			seen++
		}
	}
}

func TestFaultStall(t *testing.T) {
	s := newServer(t, threeTurns)
	c := newClient(t)

	// A stall without a limit lasts until the client gives up.
	s.InjectFault(FaultStall{AfterEvents: 2})
	ctx, cancel := context.WithCancel(context.Background())
	resp := sendCtx(t, ctx, c, s, ModeResponses, requestBody(ModeResponses, "m"))
	readEvents(t, bufio.NewReader(resp.Body), 2)
	cancel()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v", err)
	}
	resp.Body.Close()
	expectTurn(t, c, s, ModeResponses, threeTurns.Turns[0].Text)

	// A stall with a limit resumes and completes the turn, which then
	// counts as served.
	s.InjectFault(FaultStall{AfterEvents: 1, For: time.Millisecond})
	expectTurn(t, c, s, ModeChat, "second")
	expectTurn(t, c, s, ModeChat, "third")
}

// TestFaultStallEndsOnClose checks that Close ends a stall whose client is
// still waiting.
func TestFaultStallEndsOnClose(t *testing.T) {
	s, err := New(Options{Script: threeTurns})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	s.InjectFault(FaultStall{AfterEvents: 1})
	resp := send(t, c, s, ModeAnthropic, requestBody(ModeAnthropic, "m"))
	readEvents(t, bufio.NewReader(resp.Body), 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the stalled body ended cleanly after Close")
	}
	resp.Body.Close()
}

func TestFaultErrorEvent(t *testing.T) {
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			s := newServer(t, threeTurns)
			c := newClient(t)
			s.InjectFault(FaultErrorEvent{AfterEvents: 4})
			s.InjectFault(FaultErrorEvent{Type: "insufficient_quota", Message: "pay up"})

			resp := send(t, c, s, mode, requestBody(mode, "m"))
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d, read error %v", resp.StatusCode, err)
			}
			evs := parseSSE(t, b)
			switch mode {
			case ModeAnthropic:
				if len(evs) != 5 {
					t.Fatalf("%d events, want 4 and the error", len(evs))
				}
				last := evs[4]
				m := decode(t, last)
				if last.Event != "error" || m["type"] != "error" || at(m, "error", "type") != "overloaded_error" || at(m, "error", "message") != "Overloaded" {
					t.Errorf("Anthropic error event: %+v", last)
				}
			case ModeResponses:
				if len(evs) != 6 {
					t.Fatalf("%d events, want 4, error and response.failed", len(evs))
				}
				e, f := decode(t, evs[4]), decode(t, evs[5])
				if evs[4].Event != "error" || at(e, "error", "type") != "server_error" || num(e["sequence_number"]) != 4 {
					t.Errorf("Responses error event: %+v", evs[4])
				}
				if evs[5].Event != "response.failed" || at(f, "response", "status") != "failed" ||
					at(f, "response", "error", "code") != "server_error" || num(f["sequence_number"]) != 5 {
					t.Errorf("Responses response.failed: %+v", evs[5])
				}
				if at(f, "response", "id") != at(decode(t, evs[0]), "response", "id") {
					t.Error("response.failed names another response")
				}
			case ModeChat:
				if len(evs) != 5 {
					t.Fatalf("%d events, want 4 and the error", len(evs))
				}
				m := decode(t, evs[4])
				if at(m, "error", "type") != "server_error" || str(at(m, "error", "message")) == "" {
					t.Errorf("chat error chunk: %+v", evs[4])
				}
				if strings.Contains(string(b), "[DONE]") {
					t.Error("chat error stream has [DONE]")
				}
			}

			resp = send(t, c, s, mode, requestBody(mode, "m"))
			b = readAll(t, resp)
			evs = parseSSE(t, b)
			last := decode(t, evs[len(evs)-1])
			if mode == ModeResponses {
				last = decode(t, evs[len(evs)-2])
			}
			if at(last, "error", "type") != "insufficient_quota" || at(last, "error", "message") != "pay up" {
				t.Errorf("typed error event: %s", b)
			}

			expectTurn(t, c, s, mode, threeTurns.Turns[0].Text)
		})
	}
}

func TestFaultRefuse(t *testing.T) {
	s := newServer(t, threeTurns)
	c := newClient(t)
	url := s.URL()
	expectTurn(t, c, s, ModeChat, threeTurns.Turns[0].Text) // leaves an idle keep-alive connection

	s.InjectFault(FaultRefuse{})
	if !s.Refusing() {
		t.Fatal("not refusing after FaultRefuse")
	}
	// A fresh dial is refused before any request byte is sent.
	if conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://")); err == nil {
		conn.Close()
		t.Fatal("dial succeeded while refusing")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial: %v, want ECONNREFUSED", err)
	}
	// So is a plain client's request. (A client with a pooled connection
	// may instead see that connection closed; see FaultRefuse.)
	req, _ := http.NewRequest(http.MethodPost, endpoint(s, ModeChat), strings.NewReader(`{}`))
	if resp, err := newClient(t).Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("request succeeded while refusing")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("request: %v, want ECONNREFUSED", err)
	}

	if err := s.Reopen(); err != nil {
		t.Fatal(err)
	}
	if s.URL() != url || s.Refusing() {
		t.Fatalf("after Reopen: URL %q (was %q), refusing %v", s.URL(), url, s.Refusing())
	}
	// The refusal closed c's pooled connection, and c may not have noticed
	// yet: a POST sent on it would fail with EOF (see FaultRefuse).
	c.CloseIdleConnections()
	expectTurn(t, c, s, ModeChat, "second") // same port, served again
	if err := s.Reopen(); err != nil {
		t.Errorf("Reopen while open: %v", err)
	}
}

// TestFaultRefuseQueued checks that a FaultRefuse behind another fault
// waits for that fault's request.
func TestFaultRefuseQueued(t *testing.T) {
	s := newServer(t, threeTurns)
	c := newClient(t)
	s.InjectFault(FaultStatus{Code: 503})
	s.InjectFault(FaultRefuse{})
	if s.Refusing() {
		t.Fatal("refusing before the 503 was served")
	}
	resp := send(t, c, s, ModeResponses, requestBody(ModeResponses, "m"))
	readAll(t, resp)
	if resp.StatusCode != 503 || !s.Refusing() {
		t.Fatalf("status %d, refusing %v", resp.StatusCode, s.Refusing())
	}
	if err := s.Reopen(); err != nil {
		t.Fatal(err)
	}
	expectTurn(t, c, s, ModeResponses, threeTurns.Turns[0].Text)
}

func TestFaultRefuseFor(t *testing.T) {
	s := newServer(t, threeTurns)
	s.InjectFault(FaultRefuse{For: 20 * time.Millisecond})
	addr := strings.TrimPrefix(s.URL(), "http://")
	deadline := time.Now().Add(10 * time.Second)
	for s.Refusing() {
		if time.Now().After(deadline) {
			t.Fatal("still refusing long after For")
		}
		time.Sleep(5 * time.Millisecond)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial after the refusal ended: %v", err)
	}
	conn.Close()
}

func TestFaultWithoutTurn(t *testing.T) {
	s := newServer(t, Script{})
	s.InjectFault(FaultErrorEvent{})
	body := readAll(t, send(t, newClient(t), s, ModeAnthropic, requestBody(ModeAnthropic, "m")))
	if evs := parseSSE(t, body); len(evs) != 1 || evs[0].Event != "error" {
		t.Errorf("error event on an empty script: %s", body)
	}
}

func TestInjectFaultPanics(t *testing.T) {
	s := newServer(t, Script{})
	for _, f := range []Fault{nil, FaultStatus{Code: 200}, &FaultStatus{Code: 500}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("InjectFault(%#v) did not panic", f)
				}
			}()
			s.InjectFault(f)
		}()
	}
}
