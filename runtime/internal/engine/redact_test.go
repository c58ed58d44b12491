package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/protocol"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/provider"
)

const (
	echoKey    = "sk-test-secret-value" // the fixture's api_key
	echoHeader = "gw-header-secret-42"
)

// pushAll streams deltas through a fresh stream redactor and returns the
// concatenated output, checking that no single emitted piece is unsafe.
func pushAll(t *testing.T, r *redactor, deltas ...string) string {
	t.Helper()
	s := stream{r: r}
	var b strings.Builder
	for _, d := range deltas {
		b.WriteString(s.Push(d))
	}
	b.WriteString(s.Flush())
	return b.String()
}

// TestStreamRedactsEverySplit splits each credential at every byte
// boundary across two deltas, and across three around every pair of
// boundaries: the output is always the text with the credential replaced.
func TestStreamRedactsEverySplit(t *testing.T) {
	r := newRedactor(echoKey, map[string]string{"X-Gateway": echoHeader, "X-Short": "beta"})
	for _, sec := range []string{echoKey, echoHeader} {
		in := "before " + sec + " after"
		want := "before " + RedactedMarker + " after"
		for i := 0; i <= len(in); i++ {
			if got := pushAll(t, r, in[:i], in[i:]); got != want {
				t.Fatalf("split at %d: %q", i, got)
			}
		}
		for i := 0; i <= len(sec); i++ {
			for j := i; j <= len(sec); j++ {
				if got := pushAll(t, r, "x"+sec[:i], sec[i:j], sec[j:]+"y"); got != "x"+RedactedMarker+"y" {
					t.Fatalf("split at %d,%d: %q", i, j, got)
				}
			}
		}
		// One byte per delta.
		if got := pushAll(t, r, strings.Split(in, "")...); got != want {
			t.Fatalf("bytewise: %q", got)
		}
	}
}

func TestStreamRedactorCases(t *testing.T) {
	r := newRedactor(echoKey, map[string]string{"A": echoHeader, "B": "sk-test-secret-value-longer", "C": "beta"})
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"no secret here"}, "no secret here"},
		{[]string{"sk-test-secret-valu"}, "sk-test-secret-valu"},              // a prefix only: flushed as is
		{[]string{"sk-test-", "secret-valuX"}, "sk-test-secret-valuX"},        // a near miss
		{[]string{"sk-test-secret-value-longer!"}, RedactedMarker + "!"},      // the longest secret wins
		{[]string{"sk-test-secret-value-lon", "g"}, RedactedMarker + "-long"}, // the shorter one at the end of the stream
		{[]string{echoKey + echoKey}, RedactedMarker + RedactedMarker},
		{[]string{"beta beta"}, "beta beta"}, // under MinRedactedBytes: not a secret
		{[]string{"ss", "sk-test-secret-value"}, "ss" + RedactedMarker},
		{[]string{"", "", echoHeader[:3], "", echoHeader[3:]}, RedactedMarker},
	} {
		if got := pushAll(t, r, c.in...); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRedactorNoSecretsIsIdentity: without credentials every delta comes
// back as it is, and with one it costs no allocation when it holds none.
func TestRedactorNoSecretsIsIdentity(t *testing.T) {
	s := stream{r: newRedactor("", nil)}
	if got := s.Push("abc"); got != "abc" {
		t.Fatal(got)
	}
	one := stream{r: newRedactor(echoKey, nil)}
	if n := testing.AllocsPerRun(100, func() { one.Push("tok5 ") }); n != 0 {
		t.Fatalf("%v allocations per delta", n)
	}
	if n := testing.AllocsPerRun(100, func() { one.r.String("a tool output without a key") }); n != 0 {
		t.Fatalf("%v allocations per string", n)
	}
}

func TestRedactToolCall(t *testing.T) {
	r := newRedactor(echoKey, nil)
	c := r.call(provider.ToolCall{ID: "c1", Name: "write", Arguments: `{"path":"k.txt","content":"key=` + echoKey + `"}`})
	if c.Arguments != `{"path":"k.txt","content":"key=`+RedactedMarker+`"}` {
		t.Fatal(c.Arguments)
	}
	// Spelled with JSON escapes, it is still the credential to a tool.
	c = r.call(provider.ToolCall{ID: "c1", Name: "write", Arguments: `{"path":"k.txt","n":1.50,"content":"\u0073k-test-secret-value\n"}`})
	if c.Arguments != `{"path":"k.txt","n":1.50,"content":"[redacted]\n"}` {
		t.Fatal(c.Arguments)
	}
	// Escapes without a credential are left alone.
	in := `{"content":"a\u0041\n"}`
	if c = r.call(provider.ToolCall{Arguments: in}); c.Arguments != in {
		t.Fatal(c.Arguments)
	}
}

// TestRunRedactsEchoedKeyEverySplit: a provider that streams the key back,
// split at every byte boundary across two deltas, gets neither into a
// model_delta, final_result.output nor the session file (fixture.run checks
// every event and the session file for the key).
func TestRunRedactsEchoedKeyEverySplit(t *testing.T) {
	in := "the key is " + echoKey + "."
	for i := 0; i <= len(in); i++ {
		f := newFixture(t, text(in[:i], in[i:]))
		evs, res := f.run(f.req("q"))
		if res.Output != "the key is "+RedactedMarker+"." {
			t.Fatalf("split %d: output %q", i, res.Output)
		}
		var deltas strings.Builder
		for _, d := range find[protocol.ModelDelta](evs) {
			deltas.WriteString(d.Text)
		}
		if deltas.String() != res.Output {
			t.Fatalf("split %d: deltas %q", i, deltas.String())
		}
	}
}

// TestRunRedactsEchoesEverywhere: the key and a custom header value echoed
// in reasoning, text and tool-call arguments, and read back from a file by
// a tool, reach no event, no session record and no file the tool writes.
func TestRunRedactsEchoesEverywhere(t *testing.T) {
	f := newFixture(t,
		[]StreamEvent{
			{Kind: StreamReasoning, Text: "thinking about " + echoKey[:5]}, {Kind: StreamReasoning, Text: echoKey[5:] + " and " + echoHeader, Signature: "sig"},
			{Kind: StreamText, Text: "header " + echoHeader[:7]}, {Kind: StreamText, Text: echoHeader[7:]},
			{Kind: StreamToolCall, ToolCall: ToolCall{ID: "c1", Name: "write", Arguments: `{"path":"leak.txt","content":"` + echoKey + `"}`}},
			{Kind: StreamToolCall, ToolCall: ToolCall{ID: "c2", Name: "read", Arguments: `{"path":"planted.txt"}`}},
			{Kind: StreamFinish, FinishReason: FinishToolCalls},
		},
		text("done: "+echoKey))
	if err := os.WriteFile(filepath.Join(f.ws, "planted.txt"), []byte("API_KEY="+echoHeader+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	l := jsonLogger(&logs, LevelTrace)
	f.agent.opts.Logger, f.agent.log = l, l
	req := f.req("q")
	req.AllowFileMutation = true
	req.Route.Headers = map[string]string{"X-Gateway-Token": echoHeader}
	evs, res := f.run(req)
	if res.Status != "completed" || res.Output != "done: "+RedactedMarker {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	all, _ := json.Marshal(evs)
	sess, _ := os.ReadFile(*res.SessionFile)
	written, _ := os.ReadFile(filepath.Join(f.ws, "leak.txt"))
	for what, data := range map[string]string{"events": string(all), "session": string(sess), "written file": string(written), "log": logs.String()} {
		for _, sec := range []string{echoKey, echoHeader} {
			if strings.Contains(data, sec) {
				t.Errorf("%s holds %q", what, sec)
			}
		}
	}
	if string(written) != RedactedMarker {
		t.Errorf("the tool wrote %q", written)
	}
	if !strings.Contains(string(all), RedactedMarker) || !strings.Contains(string(sess), RedactedMarker) {
		t.Error("no marker in the events or the session")
	}
	// The model is told about the redacted file content too.
	var toolOut string
	for _, fin := range find[protocol.ToolFinish](evs) {
		toolOut += fin.Output
	}
	if !strings.Contains(toolOut, "API_KEY="+RedactedMarker) {
		t.Errorf("tool outputs %q", toolOut)
	}
}

// keyPanicker panics inside the run with the key in its value.
type keyPanicker struct{}

func (keyPanicker) Stream(context.Context, ProviderRequest) (ProviderStream, error) {
	panic("decoder bug near " + echoKey + " / " + echoHeader)
}

// TestPanicLogIsRedacted: the log line and the internal_error message of a
// panic that quotes a credential hold neither.
func TestPanicLogIsRedacted(t *testing.T) {
	f := newFixture(t)
	var logs bytes.Buffer
	a, err := New(Options{Home: f.home, Getenv: func(string) string { return "" }, Logger: jsonLogger(&logs, slog.LevelInfo),
		ProviderFactory: func(Route) (Provider, error) { return keyPanicker{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	req := f.req("q")
	req.Route.Headers = map[string]string{"X-Gateway-Token": echoHeader}
	_, res := f.run(req)
	if res.Error == nil || res.Error.Code != protocol.CodeInternalError || strings.Contains(res.Error.Message, echoHeader) {
		t.Fatalf("result %+v", res.Error)
	}
	if strings.Contains(logs.String(), echoKey) || strings.Contains(logs.String(), echoHeader) {
		t.Fatalf("a credential in the log: %s", logs.String())
	}
	lines := logLines(t, logs.String())
	if len(lines) != 1 {
		t.Fatalf("%d log lines, want the one of the panic: %s", len(lines), logs.String())
	}
	if l := lines[0]; l.Level != "ERROR" || l.Msg != "the run failed on an internal error" || l.RunID != "run-1" ||
		!strings.HasPrefix(l.Panic, "decoder bug near ") || !strings.Contains(l.Panic, RedactedMarker) || !strings.Contains(l.Stack, "goroutine") {
		t.Errorf("panic logged as %+v", l)
	}
}

// TestBashOutputRedacted: a command that prints the key in two writes
// (its arguments never held it whole, so they passed) gets it into no
// tool_progress chunk, no tool_finish output and no session record; the
// output around it is kept.
func TestBashOutputRedacted(t *testing.T) {
	f := shellFixture(t,
		calls(ToolCall{ID: "b", Name: "bash", Arguments: `{"command":"printf 'key: sk-test-'; sleep 0.05; printf 'secret-value!\\n'"}`}),
		text("done"))
	evs, res := f.run(f.req("q")) // fixture.run fails on the key in any event or the session
	if res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	var progress string
	for _, p := range find[protocol.ToolProgress](evs) {
		progress += p.Text
	}
	fins := find[protocol.ToolFinish](evs)
	if progress != "key: "+RedactedMarker+"!\n" || len(fins) != 1 || fins[0].Output != progress {
		t.Fatalf("progress %q, finish %+v", progress, fins)
	}
}

// TestEchoOverTheWires: a fake provider that streams the request's key and
// custom header value back one byte per delta, in reasoning, text and
// tool-call arguments, on each wire: neither reaches an event, the session
// file, or the file the tool writes.
func TestEchoOverTheWires(t *testing.T) {
	modes := []struct {
		fake fakeprovider.Mode
		mode string
	}{{fakeprovider.ModeAnthropic, "anthropic-messages"}, {fakeprovider.ModeChat, "openai-compatible"}, {fakeprovider.ModeResponses, "openai-responses"}}
	for _, m := range modes {
		t.Run(m.mode, func(t *testing.T) {
			fake, err := fakeprovider.New(fakeprovider.Options{APIKey: echoKey, Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
				{Reasoning: "the key " + echoKey + " and " + echoHeader, Text: "header " + echoHeader + " key " + echoKey, Chunk: 1,
					ToolCalls: []fakeprovider.ToolCall{{ID: "c1", Name: "write", Arguments: `{"path":"leak.txt","content":"` + echoKey + " " + echoHeader + `"}`}}},
				{Text: "ok " + echoKey, Chunk: 2},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			home, ws := t.TempDir(), t.TempDir()
			a, err := New(Options{Home: home, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			req := RunRequest{RunID: "r", Workspace: ws, Model: "m", Prompt: "hi", AllowFileMutation: true,
				SessionDir: filepath.Join(home, "s"),
				Route: &InlineRoute{Provider: "p", BaseURL: fake.BaseURL(m.fake), Mode: m.mode, APIKey: echoKey,
					Headers: map[string]string{"X-Gateway-Token": echoHeader}}}
			if m.fake == fakeprovider.ModeAnthropic {
				// The fake streams thinking: the request must have asked
				// for it, or its tool-use loop would turn thinking off
				// inside the assistant turn, which the fake refuses as
				// the API does.
				yes, low := true, "low"
				req.Route.SupportsReasoning, req.ReasoningEffort = &yes, &low
			}
			rc, err := a.Run(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var evs []Event
			for ev := range rc.Events() {
				evs = append(evs, ev)
			}
			res := rc.Wait()
			if res.Status != "completed" || res.Output != "ok "+RedactedMarker {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			var text, reasoning strings.Builder
			for _, d := range find[protocol.ModelDelta](evs) {
				if d.Step == 1 && d.Channel == protocol.ChannelText {
					text.WriteString(d.Text)
				} else if d.Step == 1 {
					reasoning.WriteString(d.Text)
				}
			}
			if text.String() != "header "+RedactedMarker+" key "+RedactedMarker || reasoning.String() != "the key "+RedactedMarker+" and "+RedactedMarker {
				t.Errorf("deltas: text %q, reasoning %q", text.String(), reasoning.String())
			}
			all, _ := json.Marshal(evs)
			sess, _ := os.ReadFile(*res.SessionFile)
			written, _ := os.ReadFile(filepath.Join(ws, "leak.txt"))
			for what, data := range map[string]string{"events": string(all), "session": string(sess), "written file": string(written)} {
				if strings.Contains(data, echoKey) || strings.Contains(data, echoHeader) {
					t.Errorf("%s holds a credential", what)
				}
			}
			if string(written) != RedactedMarker+" "+RedactedMarker {
				t.Errorf("written %q", written)
			}
		})
	}
}

// TestStreamMatchesWholeText: over random texts built from pieces of
// overlapping secrets, cut at random places, the streamed output equals
// redacting the whole text at once, and holds no secret.
func TestStreamMatchesWholeText(t *testing.T) {
	r := newRedactor("abcabcab", map[string]string{"1": "cabcabxy", "2": "bcab-bcab-zz"})
	pieces := []string{"a", "b", "c", "ab", "cab", "-", "x", "y", "z", "abcabcab", "bcab-"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		var in strings.Builder
		for k := rng.IntN(12); k >= 0; k-- {
			in.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := in.String()
		var deltas []string
		for rest := text; rest != ""; {
			k := 1 + rng.IntN(len(rest))
			deltas = append(deltas, rest[:k])
			rest = rest[k:]
		}
		got := pushAll(t, r, deltas...)
		if want := r.String(text); got != want {
			t.Fatalf("%q cut %q: streamed %q, whole %q", text, deltas, got, want)
		}
		for _, sec := range r.secrets {
			if strings.Contains(got, sec) {
				t.Fatalf("%q cut %q: %q still holds %q", text, deltas, got, sec)
			}
		}
	}
}
