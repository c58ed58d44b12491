package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fullTurn uses every field of a Turn.
var fullTurn = Turn{
	Reasoning: "The user wants the file listed, so I will call ls first.",
	Text:      "Let me look at the workspace — ünïcödé included.",
	ToolCalls: []ToolCall{
		{ID: "call_A", Name: "ls", Arguments: `{"path":"."}`},
		{Name: "read", Arguments: `{"path":"README.md","limit":20}`},
	},
	Usage: Usage{Input: 120, Output: 45, CacheRead: 100, CacheWrite: 7, Reasoning: 12},
	Chunk: 5,
}

func TestScriptEachMode(t *testing.T) {
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			s := newServer(t, Script{Turns: []Turn{fullTurn}})
			c := newClient(t)
			resp := send(t, c, s, mode, requestBody(mode, "gpt-test"))
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("Content-Type %q", ct)
			}
			got := summarize(t, mode, body)
			want := summary{
				Model:     "gpt-test",
				Reasoning: fullTurn.Reasoning,
				Text:      fullTurn.Text,
				Terminal:  true,
				Usage:     fullTurn.Usage,
			}
			wantID2 := "call_fake1_1"
			switch mode {
			case ModeChat:
				want.Stop = "tool_calls"
			case ModeResponses:
				want.Stop = "completed"
			case ModeAnthropic:
				want.Stop = "tool_use"
				want.Signature = defaultSignature
				wantID2 = "toolu_fake1_1"
			}
			want.Calls = []ToolCall{fullTurn.ToolCalls[0], {ID: wantID2, Name: "read", Arguments: fullTurn.ToolCalls[1].Arguments}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stream summary (-want +got):\n%s", diff)
			}
			if mode == ModeAnthropic && !strings.Contains(string(body), "event: ping\n") {
				t.Error("no ping in the Anthropic stream")
			}
			if s.TurnsLeft() != 0 {
				t.Errorf("TurnsLeft = %d after the only turn", s.TurnsLeft())
			}
		})
	}
}

// TestChunking checks that Chunk sizes the deltas, that the default splits
// text by words, and that a negative Chunk sends each text whole.
func TestChunking(t *testing.T) {
	text := "one two three four five six seven"
	for _, tc := range []struct {
		chunk int
		want  []string
	}{
		{0, []string{"one two three ", "four five six ", "seven"}},
		{10, []string{"one two th", "ree four f", "ive six se", "ven"}},
		{-1, []string{text}},
	} {
		s := newServer(t, Script{Turns: []Turn{{Text: text, Chunk: tc.chunk}}})
		body := readAll(t, send(t, newClient(t), s, ModeChat, requestBody(ModeChat, "m")))
		var got []string
		for _, ev := range parseSSE(t, body) {
			if ev.Data == "[DONE]" {
				continue
			}
			if c := str(at(decode(t, ev), "choices", 0, "delta", "content")); c != "" {
				got = append(got, c)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Chunk %d: deltas (-want +got):\n%s", tc.chunk, diff)
		}
	}
	// A piece never ends inside a UTF-8 character.
	for _, p := range byteChunks("aé€😀b", 1) {
		if !strings.HasPrefix(p, "a") && len([]rune(p)) != 1 {
			t.Errorf("piece %q splits a character", p)
		}
	}
}

func TestRefusalAndTruncated(t *testing.T) {
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			s := newServer(t, Script{Turns: []Turn{
				{Refusal: "I can't help with that.", Usage: Usage{Input: 3, Output: 4}},
				{Text: "cut sh", Truncated: true},
			}})
			c := newClient(t)
			ref := summarize(t, mode, readAll(t, send(t, c, s, mode, requestBody(mode, "m"))))
			trunc := summarize(t, mode, readAll(t, send(t, c, s, mode, requestBody(mode, "m"))))
			switch mode {
			case ModeChat:
				if ref.Refusal != "I can't help with that." || ref.Text != "" || ref.Stop != "stop" {
					t.Errorf("refusal: %+v", ref)
				}
				if trunc.Stop != "length" {
					t.Errorf("truncated finish_reason %q", trunc.Stop)
				}
			case ModeResponses:
				if ref.Refusal != "I can't help with that." || ref.Stop != "completed" {
					t.Errorf("refusal: %+v", ref)
				}
				if trunc.Stop != "incomplete" || !trunc.Terminal {
					t.Errorf("truncated: %+v", trunc)
				}
			case ModeAnthropic:
				// A refusal's text is answer text (CONTRACT §8).
				if ref.Text != "I can't help with that." || ref.Stop != "refusal" {
					t.Errorf("refusal: %+v", ref)
				}
				if trunc.Stop != "max_tokens" {
					t.Errorf("truncated stop_reason %q", trunc.Stop)
				}
			}
			if !ref.Terminal || trunc.Text != "cut sh" {
				t.Errorf("refusal terminal %v, truncated text %q", ref.Terminal, trunc.Text)
			}
		})
	}
}

// TestTurnsAcrossModes checks that turns are consumed in order whatever the
// mode, that the turn's Model overrides the request's, and that a request
// past the last turn gets a 500 saying so.
func TestTurnsAcrossModes(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{
		{Text: "first"},
		{Text: "second", Model: "claude-fake"},
		{Text: "third"},
	}})
	c := newClient(t)
	for i, mode := range []Mode{ModeChat, ModeAnthropic, ModeResponses} {
		got := summarize(t, mode, readAll(t, send(t, c, s, mode, requestBody(mode, "asked"))))
		want := []string{"first", "second", "third"}[i]
		if got.Text != want {
			t.Errorf("request %d (%s): text %q, want %q", i, mode, got.Text, want)
		}
		if i == 1 && got.Model != "claude-fake" {
			t.Errorf("turn model: stream says %q", got.Model)
		}
	}
	for _, mode := range Modes() {
		resp := send(t, c, s, mode, requestBody(mode, "m"))
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "exhausted") {
			t.Errorf("%s past the script: %d %s", mode, resp.StatusCode, body)
		}
		var env map[string]any
		if err := json.Unmarshal(body, &env); err != nil || env["error"] == nil {
			t.Errorf("%s: not an error envelope: %s", mode, body)
		}
	}
	var turns []int
	for _, r := range s.Requests() {
		turns = append(turns, r.Turn)
	}
	if diff := cmp.Diff([]int{0, 1, 2, -1, -1, -1}, turns); diff != "" {
		t.Errorf("Request.Turn (-want +got):\n%s", diff)
	}
}

// TestKeepRequests: with Options.KeepRequests a server reports only the
// latest requests, in order and with what each was answered (its turn), and
// keeps no more than twice that many in memory at any time.
func TestKeepRequests(t *testing.T) {
	turns := make([]Turn, 9)
	for i := range turns {
		turns[i] = Turn{Text: "t" + strconv.Itoa(i)}
	}
	s, err := New(Options{Script: Script{Turns: turns}, KeepRequests: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := newClient(t)
	for i := range turns {
		readAll(t, send(t, c, s, ModeChat, requestBody(ModeChat, "m"+strconv.Itoa(i))))
		s.mu.Lock()
		held := len(s.requests)
		s.mu.Unlock()
		if held > 2*3 {
			t.Fatalf("after request %d the server holds %d requests, want at most 6", i, held)
		}
	}
	var got []int
	for _, r := range s.Requests() {
		got = append(got, r.Turn)
	}
	if diff := cmp.Diff([]int{6, 7, 8}, got); diff != "" {
		t.Errorf("Requests' turns (-want +got):\n%s", diff)
	}
}

func TestNoScript(t *testing.T) {
	s := newServer(t, Script{})
	resp := send(t, newClient(t), s, ModeChat, requestBody(ModeChat, "m"))
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "SetScript") {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
}

func TestValidation(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{{Text: "never consumed"}}})
	c := newClient(t)
	without := func(mode Mode, key string) map[string]any {
		b := requestBody(mode, "m")
		delete(b, key)
		return b
	}
	noStream := requestBody(ModeResponses, "m")
	noStream["stream"] = false
	for _, tc := range []struct {
		name  string
		mode  Mode
		body  any
		param string
	}{
		{"not json", ModeChat, "{not json", ""},
		{"empty", ModeResponses, "", ""},
		{"array", ModeAnthropic, "[1,2]", ""},
		{"no model", ModeChat, without(ModeChat, "model"), "model"},
		{"no model", ModeAnthropic, without(ModeAnthropic, "model"), "model"},
		{"stream false", ModeResponses, noStream, "stream"},
		{"no stream", ModeAnthropic, without(ModeAnthropic, "stream"), "stream"},
		{"no messages", ModeChat, without(ModeChat, "messages"), "messages"},
		{"no max_tokens", ModeAnthropic, without(ModeAnthropic, "max_tokens"), "max_tokens"},
	} {
		resp := send(t, c, s, tc.mode, tc.body)
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s %s: status %d", tc.mode, tc.name, resp.StatusCode)
			continue
		}
		var env map[string]any
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatalf("%s %s: %v: %s", tc.mode, tc.name, err, body)
		}
		if tc.mode == ModeAnthropic {
			if env["type"] != "error" || at(env, "error", "type") != "invalid_request_error" || str(at(env, "error", "message")) == "" {
				t.Errorf("%s %s: Anthropic envelope expected: %s", tc.mode, tc.name, body)
			}
			if !strings.Contains(str(at(env, "error", "message")), tc.param) {
				t.Errorf("%s %s: message does not name %q: %s", tc.mode, tc.name, tc.param, body)
			}
		} else {
			if at(env, "error", "type") != "invalid_request_error" || str(at(env, "error", "message")) == "" {
				t.Errorf("%s %s: OpenAI envelope expected: %s", tc.mode, tc.name, body)
			}
			if tc.param != "" && at(env, "error", "param") != tc.param {
				t.Errorf("%s %s: param %v, want %q", tc.mode, tc.name, at(env, "error", "param"), tc.param)
			}
		}
	}
	if s.TurnsLeft() != 1 {
		t.Errorf("an invalid request consumed a turn: %d left", s.TurnsLeft())
	}
	// Wrong method, unknown path.
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/v1/chat/completions", http.StatusMethodNotAllowed},
		{http.MethodPost, "/v1/models", http.StatusMethodNotAllowed},
		{http.MethodPost, "/chat/completions", http.StatusNotFound},
		{http.MethodPost, "/v1/v1/messages", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tc.method, s.URL()+tc.path, strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, resp.StatusCode, body)
		}
	}
}

func TestModels(t *testing.T) {
	s := newServer(t, Script{Models: []string{"gpt-a", "gpt-b"}, Turns: []Turn{{Model: "claude-c"}, {Model: "gpt-a"}}})
	c := newClient(t)
	get := func(anthropic bool) map[string]any {
		req, _ := http.NewRequest(http.MethodGet, s.BaseURL(ModeChat)+"/models", nil)
		if anthropic {
			req.Header.Set("anthropic-version", "2023-06-01")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(readAll(t, resp), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ids := func(m map[string]any) (out []string) {
		for _, d := range asList(m["data"]) {
			out = append(out, str(at(d, "id")))
		}
		return out
	}
	oa := get(false)
	if oa["object"] != "list" || at(oa, "data", 0, "object") != "model" {
		t.Errorf("OpenAI list shape: %v", oa)
	}
	if diff := cmp.Diff([]string{"gpt-a", "gpt-b", "claude-c"}, ids(oa)); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	an := get(true)
	if an["has_more"] != false || at(an, "data", 0, "type") != "model" || an["first_id"] != "gpt-a" {
		t.Errorf("Anthropic list shape: %v", an)
	}
}

func TestRequestsRedactKeys(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{{Text: "a"}, {Text: "b"}}})
	c := newClient(t)
	const secret = "sk-very-secret-0123456789"
	post := func(url, header, value string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"model":"m","stream":true,"messages":[],"max_tokens":5}`))
		req.Header.Set(header, value)
		req.Header.Set("X-Custom", "kept")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
	}
	post(endpoint(s, ModeChat), "Authorization", "Bearer "+secret)
	post(endpoint(s, ModeAnthropic), "x-api-key", secret)
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	if dump := fmt.Sprintf("%#v", reqs); strings.Contains(dump, secret) || strings.Contains(dump, secret[3:15]) {
		t.Fatalf("Requests leaks the key: %s", dump)
	}
	for i, r := range reqs {
		if !r.HadKey || r.KeySHA256 != KeyFingerprint(secret) || len(r.KeySHA256) != 12 {
			t.Errorf("request %d: HadKey %v KeySHA256 %q", i, r.HadKey, r.KeySHA256)
		}
		if r.Header.Get("X-Custom") != "kept" || r.Method != http.MethodPost || r.Model() != "m" {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	if reqs[0].Header.Get("Authorization") != redacted || reqs[1].Header.Get("X-Api-Key") != redacted {
		t.Errorf("credential headers not redacted: %v / %v", reqs[0].Header, reqs[1].Header)
	}
	if reqs[0].Mode != ModeChat || reqs[0].Path != "/v1/chat/completions" || reqs[1].Mode != ModeAnthropic || reqs[1].Path != "/v1/messages" {
		t.Errorf("modes/paths: %v %v / %v %v", reqs[0].Mode, reqs[0].Path, reqs[1].Mode, reqs[1].Path)
	}
	// Requests returns copies.
	reqs[0].Header.Set("X-Custom", "changed")
	if s.Requests()[0].Header.Get("X-Custom") != "kept" {
		t.Error("Requests shares its headers with the caller")
	}
	// No key at all.
	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/v1/models", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if r := s.Requests()[2]; r.HadKey || r.KeySHA256 != "" {
		t.Errorf("keyless request: %+v", r)
	}
}

func TestAPIKeyRequired(t *testing.T) {
	s, err := New(Options{APIKey: "right", Script: Script{Turns: []Turn{{Text: "ok"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := newClient(t)
	// The helpers send "test-key".
	for _, mode := range Modes() {
		resp := send(t, c, s, mode, requestBody(mode, "m"))
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "error") {
			t.Errorf("%s: %d %s", mode, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, endpoint(s, ModeResponses), strings.NewReader(`{"model":"m","stream":true}`))
	req.Header.Set("Authorization", "Bearer right")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("right key: %d %s", resp.StatusCode, body)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0", "[::]:0", "nonsense"} {
		if s, err := New(Options{Addr: addr}); err == nil {
			s.Close()
			t.Errorf("New(%q) listened", addr)
		}
	}
	s, err := New(Options{Addr: "localhost:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q", s.URL())
	}
	if s.BaseURL(ModeChat) != s.URL()+"/v1" || s.BaseURL(ModeResponses) != s.URL()+"/v1" || s.BaseURL(ModeAnthropic) != s.URL() {
		t.Errorf("BaseURLs %q %q %q", s.BaseURL(ModeChat), s.BaseURL(ModeResponses), s.BaseURL(ModeAnthropic))
	}
}

func TestParseScript(t *testing.T) {
	sc, err := ParseScript([]byte(`{
		"models": ["m1"],
		"turns": [
			{"text": "hi", "usage": {"input": 3, "output": 2}},
			{"tool_calls": [{"id": "c1", "name": "ls", "arguments": {"path": "."}},
			                {"name": "read", "arguments": "{\"path\": \"a\"}"}], "chunk": -1}
		]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Script{Models: []string{"m1"}, Turns: []Turn{
		{Text: "hi", Usage: Usage{Input: 3, Output: 2}},
		{ToolCalls: []ToolCall{{ID: "c1", Name: "ls", Arguments: `{"path":"."}`}, {Name: "read", Arguments: `{"path": "a"}`}}, Chunk: -1},
	}}
	if diff := cmp.Diff(want, sc); diff != "" {
		t.Errorf("ParseScript (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"turns":[{"txt":"typo"}]}`, `{"turns":[]} {}`, `[`, `{"turns":[{"tool_calls":[{"name":"x","args":"{}"}]}]}`, `{"turns":[{"text":"a","steer":{"outcome":"acepted"}}]}`} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("ParseScript(%s) accepted", bad)
		}
	}
	// Round trip through the encoder of the Script type itself.
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseScript(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestConcurrentRequests checks, under -race, that concurrent requests of
// all modes each take a distinct turn.
func TestConcurrentRequests(t *testing.T) {
	const n = 24
	var turns []Turn
	for i := range n {
		turns = append(turns, Turn{Text: fmt.Sprintf("turn %d", i)})
	}
	s := newServer(t, Script{Turns: turns})
	c := newClient(t)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	for i := range n {
		wg.Go(func() {
			mode := Modes()[i%3]
			text := summarize(t, mode, readAll(t, send(t, c, s, mode, requestBody(mode, "m")))).Text
			mu.Lock()
			defer mu.Unlock()
			if seen[text] {
				t.Errorf("turn %q served twice", text)
			}
			seen[text] = true
		})
		_ = s.Requests()
	}
	wg.Wait()
	if len(seen) != n || s.TurnsLeft() != 0 {
		t.Errorf("%d distinct turns served, %d left", len(seen), s.TurnsLeft())
	}
}

func TestResponsesEncryptedContent(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{{Reasoning: "think", Text: "x"}, {Reasoning: "think", Signature: "enc-1"}}})
	c := newClient(t)
	plain := summarize(t, ModeResponses, readAll(t, send(t, c, s, ModeResponses, requestBody(ModeResponses, "m"))))
	b := requestBody(ModeResponses, "m")
	b["include"] = []string{"reasoning.encrypted_content"}
	withEnc := summarize(t, ModeResponses, readAll(t, send(t, c, s, ModeResponses, b)))
	if plain.Signature != "" || withEnc.Signature != "enc-1" {
		t.Errorf("encrypted_content: without include %q, with include %q", plain.Signature, withEnc.Signature)
	}
}

func TestChatUsageOnlyWhenAsked(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{{Text: "x", Usage: Usage{Input: 1, Output: 2}}}})
	b := requestBody(ModeChat, "m")
	delete(b, "stream_options")
	body := readAll(t, send(t, newClient(t), s, ModeChat, b))
	if strings.Contains(string(body), `"usage"`) {
		t.Errorf("usage chunk sent without stream_options.include_usage:\n%s", body)
	}
}
