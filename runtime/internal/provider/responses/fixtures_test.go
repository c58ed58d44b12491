package responses

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixtureDir holds the recorded streams, copied unchanged from the shared
// fixtures (testdata/LICENSES.md).
var fixtureDir = filepath.Join("testdata", "openai-responses")

// summary is what a consumer ends up with after a whole stream.
type summary = edgetest.Summary

// suite is what the shared checks need of this package.
var suite = providertest.Suite{Key: testKey, Request: simpleRequest, Check: checkNonEmpty}

// drain reads a stream to its end, checking the ordering rules every stream
// must keep (providertest.Suite.Drain) and checkNonEmpty.
func drain(t *testing.T, s provider.Stream) (summary, []provider.StreamEvent, error) {
	t.Helper()
	return suite.Drain(t, s)
}

// testProvider returns a Provider aimed at srv with a transport of its own,
// closed when the test ends so goleak sees no idle connection.
func testProvider(t *testing.T, srv *httptest.Server, mod func(*Config)) *Provider {
	t.Helper()
	return providertest.New(t, New, Config{BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: edgetest.Client(t)}, mod)
}

const testKey = "sk-test-0123456789abcdefSECRET"

// fixtureBody returns the body to serve for a fixture: .sse files raw,
// .chunks.jsonl files as "event: <type>\ndata: <line>\n\n" per line, where
// <type> is the line's JSON type (fixtures/providers/SOURCES.md).
func fixtureBody(t testing.TB, name string) []byte {
	t.Helper()
	raw := edgetest.ReadFixture(t, fixtureDir, name)
	if strings.HasSuffix(name, ".sse") {
		return raw
	}
	return edgetest.TypedEvents(t, name, raw)
}

// fixtureHandler serves a fixture, with its recorded status and headers
// when there are any (hop-by-hop and framing headers excepted: the test
// server frames the body itself).
func fixtureHandler(t *testing.T, name string) http.HandlerFunc {
	t.Helper()
	body := fixtureBody(t, name)
	rec := edgetest.PlainStream()
	if stem, ok := strings.CutSuffix(name, ".sse"); ok {
		rec = edgetest.ReadRecorded(t, filepath.Join(fixtureDir, stem+".headers.json"), true)
	}
	return rec.Handler(body)
}

var simpleRequest = provider.Request{
	Model:    "gpt-test",
	Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}},
}

func streamFrom(t *testing.T, p *Provider) (summary, []provider.StreamEvent, error) {
	t.Helper()
	return suite.StreamFrom(t, p)
}

var usage = providertest.Usage

// step1Signature is the encrypted_content of the reasoning item's
// output_item.done in vercel_gpt-5.1-codex-max_step1 (its output_item.added
// carries a different, earlier value).
const step1Signature = "gAAAAABpPDIVOKrsHNZ0GwsoEKA_IGfuJ5f8Ma_6-EojH4yZFL50qlfUzM7FREdQlpkqlnIHLRx2YJxZfzvbnc0E3J_yvIuoeoGQ" +
	"p2hYUfiV5XWs5d0XfqJps9ZgtUBRR1dqB43ooABehaMjM6BjaSGz-3PeUHZfedawAcRKhdJuLF1Q2YPL0OI4i97zy3O1u_2ypHd9" +
	"JTE1pWoJMwPqx3myOs1_eeg5_yzgiQ0WsRHLvginFvEUyt-N7uxubO6bHfSN_TVTyXiDhCI6lf1v1r8ElDAkFfpbEKvIhUs4SGhy" +
	"kBWkYauqsB9B79Nfr6gwmaUnRGAct8ZsX394UVAqqokBqLIB8EzDjckb5EkUh0F33Ye_9-Nyjo7zLN_gTGxf3JI5DxsbFsZAylpE" +
	"sEAX6_UbH0o3-2dfy_p9_rgNUNfQmg4nty8z0ZIKdEC7hihyD-4gj7lRYEKcDhQmDVKJW-6asLIpFVoX65yJRo-xOBPf3lLzXczl" +
	"XWvvYiooHFAF5h1YFFzfjS8pnXkpnq-cFS4Ot8i63pAKgTcRMQEgOB1AxjXOX-QRnX_ncyJmYDVAl-Q7zJwc2cynXXCiaoYfaFxN" +
	"0P26An7bV18Dwrz3ed-hd-mKUQM_nS9z59kyvCb8Ug7KxD10Me8jyzOFXgtmb76vTRxa7zjMdQhoGE2wRO348n28yM4flAKqUS7b" +
	"0TsUljeSSnoBXMJSqpuqKXrpmLWjt8_Ws9dEgP3ql8QcQwnQ5QAePNXoleQGBjiF_C5WI8Qoyd6yxFcYM939msh9gfA94QAQiMB7" +
	"-KUpmo_8ViQOVAggnt1QlXXHrrHuEDDgL2l42_aAIVL3GlHCuSlIChiET8y2iRZmxhDoEg61zQAuknapDM8-5POFTRcbniqN6eHJ" +
	"jxKOJpD45JkH1HYAOHAX3llk6M1MNx_YkYc7mOXmcPIHUYvHOjTv7dAhntZhxn4iHXHRvFRd22b4pUNxSPHDJQ8_UgJ0OgCZIoy1" +
	"axBR84rbicty4RCaGkbotBee75SdYcE__rOXQxSo_8XMnObfNxat0wz4uQ=="

const quotaMessage = "You exceeded your current quota, please check your plan and billing details. " +
	"For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."

// fixtureCases is the expectation for every stream fixture: the exact
// decoded text, reasoning, signatures, tool calls, usage and finish, or the
// exact error.
var fixtureCases = []struct {
	file    string
	want    summary
	wantErr *provider.Error
}{
	{file: "llm-openai-plugin_function-call.sse", want: summary{
		ToolCalls: []provider.ToolCall{{ID: "call_sNntVegw8ViC8Zc4EIjqEKbo", Name: "simple_tool", Arguments: `{"number":"5"}`}},
		Usage:     usage(46, 148, 194, 0, 128),
		Finish:    provider.FinishToolCalls,
	}},
	{file: "llm-openai-plugin_text-after-tool-output.sse", want: summary{
		Text:   "I called simple_tool with 5; it returned:\n\"This is a simple tool, 5\"\n\nAnything else you’d like me to run or change?",
		Usage:  usage(85, 101, 186, 0, 64),
		Finish: provider.FinishStop,
	}},
	{file: "llm-openai-plugin_text-2025-03.sse", want: summary{
		Text:   "Hi there! How can I assist you today?",
		Usage:  usage(27, 11, 38, 0, 0),
		Finish: provider.FinishStop,
	}},
	{file: "vercel_gpt-5.1-codex-max_step1.chunks.jsonl", want: summary{
		Reasoning: "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, " +
			"and finally multiply that by 10, reporting the final product.",
		ToolCalls: []provider.ToolCall{{ID: "call_AB6AaRZ1FYZB2RwS6A5vbdqn", Name: "calculator", Arguments: `{"a":12,"b":7,"op":"add"}`}},
		Usage:     usage(134, 28, 162, 0, 0),
		Finish:    provider.FinishToolCalls,
	}.SignedItem("rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9", step1Signature)},
	{file: "vercel_gpt-5.1-codex-max_step2.chunks.jsonl", want: summary{
		ToolCalls: []provider.ToolCall{{ID: "call_Q6pW65MUgW9vF59BmItYGos3", Name: "calculator", Arguments: `{"a":19,"b":3,"op":"multiply"}`}},
		Usage:     usage(221, 26, 247, 0, 0),
		Finish:    provider.FinishToolCalls,
	}},
	{file: "vercel_gpt-5.1-codex-max_step3.chunks.jsonl", want: summary{
		ToolCalls: []provider.ToolCall{{ID: "call_Zl5vIMnD7dVAjgU6FkhmiCZh", Name: "calculator", Arguments: `{"a":57,"b":10,"op":"multiply"}`}},
		Usage:     usage(260, 26, 286, 0, 0),
		Finish:    provider.FinishToolCalls,
	}},
	{file: "vercel_gpt-5.1-codex-max_step4.chunks.jsonl", want: summary{
		Text:   "The final result is **570**.",
		Usage:  usage(299, 12, 311, 0, 0),
		Finish: provider.FinishStop,
	}},
	{file: "vercel_error-event-insufficient-quota.chunks.jsonl", wantErr: &provider.Error{
		Kind: provider.FailErrorEvent, Code: "insufficient_quota", Message: quotaMessage, RequestWritten: true,
	}},
	{file: "vercel_github-copilot-id-rotation.chunks.jsonl", want: summary{
		Reasoning: "**Counting character occurrences**",
		Text: "There are **3** letter **“r”**s in **“strawberry.”**\n\nBreakdown: **s t r a w b e r r y**  \n" +
			"You can see **r** at positions **3, 8, and 9**.",
		Usage:  usage(19, 105, 124, 0, 44),
		Finish: provider.FinishStop,
	}},
	{file: "vercel_phase-commentary-final.chunks.jsonl", want: summary{
		// Two message items (commentary, then final_answer at output
		// index 2): a blank line between them. vercel trimmed the
		// deltas; the done items hold longer texts, which are not used
		// since the items did stream.
		Text:   "Got it\n\nHere are a few **AI",
		Usage:  usage(7112, 463, 7575, 3072, 64),
		Finish: provider.FinishStop,
	}},
	{file: "vercel_tool-search-then-function-call.chunks.jsonl", want: summary{
		ToolCalls: []provider.ToolCall{{ID: "call_pddfxhfOx4gY56zn4vIIEbFp", Name: "get_weather", Arguments: `{"location":"San Francisco, CA","unit":"fahrenheit"}`}},
		Usage:     usage(640, 46, 686, 0, 20),
		Finish:    provider.FinishToolCalls,
	}},
	{file: "vercel_lmstudio-tool-call.chunks.jsonl", want: summary{
		Reasoning: "The user is asking for the weather in San Francisco. I have a weather function available that takes a location parameter. " +
			"The user has provided \"San Francisco\" as the location, so I have all the required information to make the function call.",
		Text:      "I'll get the current weather information for San Francisco for you.",
		ToolCalls: []provider.ToolCall{{ID: "call_2025306790300011", Name: "weather", Arguments: `{"location":"San Francisco"}`}},
		Usage:     usage(182, 61, 243, 2, 48),
		Finish:    provider.FinishToolCalls,
	}},
}

// TestFixtureCoverage fails when a fixture file has no expectation: every
// stream has a case in fixtureCases, every error body one in
// TestHTTPErrors, every headers file a stream of the same stem.
func TestFixtureCoverage(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range fixtureCases {
		covered[tc.file] = true
	}
	for _, name := range errorFixtures {
		covered[filepath.Join("errors", name)] = true
	}
	err := filepath.WalkDir(fixtureDir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		name, _ := filepath.Rel(fixtureDir, path)
		switch {
		case name == "SOURCES.md":
		case strings.HasSuffix(name, ".headers.json"):
			if stem := strings.TrimSuffix(name, ".headers.json"); !covered[stem+".sse"] {
				t.Errorf("headers file %s has no stream with expectations", name)
			}
		case !covered[name]:
			t.Errorf("fixture %s has no expectation", name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFixtures(t *testing.T) {
	for _, tc := range fixtureCases {
		t.Run(tc.file, func(t *testing.T) {
			srv := edgetest.NewServer(t, fixtureHandler(t, tc.file))
			got, _, err := streamFrom(t, testProvider(t, srv, nil))
			if tc.wantErr != nil {
				pe := edgetest.AsProviderError(t, err)
				if diff := cmp.Diff(tc.wantErr, pe, errorOpts); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			} else if err != nil {
				t.Fatalf("Err() = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFixturesWithoutEventLines replays every chunk fixture with data lines
// only: the JSON type alone must drive the decoding.
func TestFixturesWithoutEventLines(t *testing.T) {
	for _, tc := range fixtureCases {
		if !strings.HasSuffix(tc.file, ".jsonl") {
			continue
		}
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			for line := range bytes.Lines(fixtureBody(t, tc.file)) {
				if !bytes.HasPrefix(line, []byte("event:")) {
					b.Write(line)
				}
			}
			got, _, err := drainDecoder(t, b.Bytes())
			if (err != nil) != (tc.wantErr != nil) {
				t.Fatalf("Err() = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFixtureEventOrder pins the exact event sequence of fixtures: text and
// reasoning as they arrive, the signature and the tool call when their items
// are done, usage, then finish.
func TestFixtureEventOrder(t *testing.T) {
	reasoning := func(s string) provider.StreamEvent {
		return provider.StreamEvent{Kind: provider.EventReasoning, Text: s}
	}
	text := func(s string) provider.StreamEvent { return provider.StreamEvent{Kind: provider.EventText, Text: s} }
	// lmstudio: reasoning_text deltas, text deltas, then the call whose
	// arguments came only in function_call_arguments.done.
	const lmFile = "vercel_lmstudio-tool-call.chunks.jsonl"
	lm := deltasOf(t, lmFile, "response.reasoning_text.delta", reasoning)
	lm = append(lm, deltasOf(t, lmFile, "response.output_text.delta", text)...)
	lm = append(lm,
		provider.StreamEvent{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: "call_2025306790300011", Name: "weather", Arguments: `{"location":"San Francisco"}`}},
		provider.StreamEvent{Kind: provider.EventUsage, Usage: *usage(182, 61, 243, 2, 48)},
		provider.StreamEvent{Kind: provider.EventFinish, FinishReason: provider.FinishToolCalls},
	)
	providertest.CheckEventOrder(t, []providertest.EventOrder{
		{lmFile, lm},
		{"llm-openai-plugin_function-call.sse", []provider.StreamEvent{
			{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: "call_sNntVegw8ViC8Zc4EIjqEKbo", Name: "simple_tool", Arguments: `{"number":"5"}`}},
			{Kind: provider.EventUsage, Usage: *usage(46, 148, 194, 0, 128)},
			{Kind: provider.EventFinish, FinishReason: provider.FinishToolCalls},
		}},
		{"vercel_phase-commentary-final.chunks.jsonl", []provider.StreamEvent{
			text("Got"), text(" it"), text("\n\n"), text("Here are a"), text(" few **AI"),
			{Kind: provider.EventUsage, Usage: *usage(7112, 463, 7575, 3072, 64)},
			{Kind: provider.EventFinish, FinishReason: provider.FinishStop},
		}},
	}, decodeFixture)
}

// TestFixtureSignatureOrder: the encrypted reasoning comes after the
// reasoning text it authenticates and before the tool call that follows.
func TestFixtureSignatureOrder(t *testing.T) {
	_, events, err := drainDecoder(t, fixtureBody(t, "vercel_gpt-5.1-codex-max_step1.chunks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range events {
		k := map[provider.EventKind]string{
			provider.EventText: "text", provider.EventReasoning: "reasoning", provider.EventToolCall: "call",
			provider.EventUsage: "usage", provider.EventFinish: "finish",
		}[ev.Kind]
		if ev.Kind == provider.EventReasoning && ev.Signature != "" {
			if ev.Text != "" {
				t.Errorf("signature event with text %q", ev.Text)
			}
			k = "signature"
		}
		if n := len(kinds); n == 0 || kinds[n-1] != k {
			kinds = append(kinds, k)
		}
	}
	if want := []string{"reasoning", "signature", "call", "usage", "finish"}; !cmp.Equal(want, kinds) {
		t.Errorf("event kinds %v, want %v", kinds, want)
	}
}

// deltasOf returns one event per delta of the given type in a fixture, in
// order, read independently of the decoder.
func deltasOf(t *testing.T, file, typ string, mk func(string) provider.StreamEvent) []provider.StreamEvent {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	var out []provider.StreamEvent
	for line := range bytes.Lines(raw) {
		var ev struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(line), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == typ {
			out = append(out, mk(ev.Delta))
		}
	}
	return out
}

// decodeFixture runs the wire decoder alone over a fixture.
func decodeFixture(t *testing.T, file string) (summary, []provider.StreamEvent, error) {
	t.Helper()
	return drainDecoder(t, fixtureBody(t, file))
}

// drainDecoder runs the wire decoder alone over body.
func drainDecoder(t *testing.T, body []byte) (summary, []provider.StreamEvent, error) {
	t.Helper()
	return suite.DrainDecoder(t, decodeStream(bytes.NewReader(body), 0))
}

// checkNonEmpty is this package's own drain rule: no empty content events.
func checkNonEmpty(t testing.TB, ev provider.StreamEvent) {
	t.Helper()
	switch {
	case ev.Kind == provider.EventText && ev.Text == "":
		t.Error("EventText without text")
	case ev.Kind == provider.EventReasoning && ev.Text == "" && ev.Signature == "":
		t.Error("EventReasoning without text or signature")
	}
}
