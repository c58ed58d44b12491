package chat

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// summary is what a consumer ends up with after a whole stream.
type summary = edgetest.Summary

// suite is what the shared checks need of this package.
var suite = providertest.Suite{Key: testKey, Request: simpleRequest}

// drain reads a stream to its end, checking the ordering rules every stream
// must keep (providertest.Suite.Drain).
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
// .chunks.jsonl files as one data: event per line and a final [DONE]
// (fixtures/providers/SOURCES.md).
func fixtureBody(t *testing.T, name string) []byte {
	t.Helper()
	raw := edgetest.ReadFixture(t, filepath.Join("testdata", "openai-chat"), name)
	if strings.HasSuffix(name, ".sse") {
		return raw
	}
	return edgetest.DataEvents(t, raw)
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

const nanoText = "**Holiday Name:** Harmony Day\n\n" +
	"**Date:** Celebrated annually on the first Saturday of May\n\n" +
	"**Purpose:** Harmony Day is dedicated to fostering understanding, kindness, and unity among diverse communities. It emphasizes celebrating cultural differences while promoting empathy and collaboration.\n\n" +
	"**Traditions:**\n\n" +
	"1. **Cultural Potluck Gatherings:** Communities come together to share traditional dishes from their backgrounds, encouraging conversation and curiosity about different cultures.\n\n" +
	"2. **Story Circles:** People of all ages are encouraged to share stories from their heritage or personal experiences that promote understanding and empathy.\n\n" +
	"3. **Decorate for Unity:** Public spaces and homes are decorated with symbols representing different cultures—flags, traditional art, and meaningful motifs—to visually celebrate diversity.\n\n" +
	"4. **Collaborative Art Projects:** Communities create murals or sculptures that symbolize unity and diversity, involving artists and residents of all ages.\n\n" +
	"5. **Acts of Kindness:** As a central activity, participants perform Small acts of kindness throughout the day, such as volunteering, helping neighbors, or inviting someone new to join festivities.\n\n" +
	"6. **Music & Dance Festivals:** Local performances showcase a variety of musical styles and dances from different parts of the world, emphasizing shared joy and creativity.\n\n" +
	"7. **Educational Workshops:** Interactive sessions teach about various cultures’ histories, traditions, and celebrations, fostering respect and knowledge.\n\n" +
	"**Overall Spirit:** Harmony Day aims to create a sense of global community, reminding everyone that despite our differences, we are all connected through shared human experiences and mutual respect."

func TestFixtures(t *testing.T) {
	tests := []struct {
		file string
		want summary
	}{
		{"openai-python_text.sse", summary{
			Text:   "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
			Usage:  usage(14, 30, 44, 0, 0),
			Finish: provider.FinishStop,
		}},
		{"openai-python_parallel-tool-calls.sse", summary{
			ToolCalls: []provider.ToolCall{
				{ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`},
				{ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price", Arguments: `{"ticker": "AAPL", "exchange": "NASDAQ"}`},
			},
			Usage:  usage(149, 60, 209, 0, 0),
			Finish: provider.FinishToolCalls,
		}},
		{"openai-python_tool-call-strict.sse", summary{
			ToolCalls: []provider.ToolCall{{ID: "call_CTf1nWJLqSeRgDqaCG27xZ74", Name: "get_weather", Arguments: `{"city":"San Francisco","state":"CA"}`}},
			Usage:     usage(48, 19, 67, 0, 0),
			Finish:    provider.FinishToolCalls,
		}},
		{"openai-python_tool-call-nonstrict.sse", summary{
			ToolCalls: []provider.ToolCall{{ID: "call_4XzlGBLtUe9dy3GVNV4jhq7h", Name: "get_weather", Arguments: `{"city":"New York City"}`}},
			Usage:     usage(44, 16, 60, 0, 0),
			Finish:    provider.FinishToolCalls,
		}},
		{"openai-python_refusal.sse", summary{
			Text:   "I'm sorry, I can't assist with that request.",
			Usage:  usage(79, 11, 90, 0, 0),
			Finish: provider.FinishStop,
		}},
		{"openai-python_finish-length.sse", summary{
			Text:   `{"`,
			Usage:  usage(79, 1, 80, 0, 0),
			Finish: provider.FinishLength,
		}},
		{"openai-python_n3-choices.sse", summary{
			Text:   `{"city":"San Francisco","temperature":65,"units":"f"}`,
			Usage:  usage(79, 42, 121, 0, 0),
			Finish: provider.FinishStop,
		}},
		{"openai-python_logprobs.sse", summary{
			Text:   "Foo!",
			Usage:  usage(9, 2, 11, 0, 0),
			Finish: provider.FinishStop,
		}},
		{"vercel_gpt-4.1-nano-text.chunks.jsonl", summary{
			Text:   nanoText,
			Usage:  usage(16, 300, 316, 0, 0),
			Finish: provider.FinishStop,
		}},
		{"vercel_azure-model-router.chunks.jsonl", summary{
			Text:   "Capital of Denmark.",
			Usage:  usage(15, 78, 93, 0, 64),
			Finish: provider.FinishStop,
		}},
		{"vercel_deepseek-reasoner-tool-call.chunks.jsonl", summary{
			Reasoning: `The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".`,
			ToolCalls: []provider.ToolCall{{ID: "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", Name: "weather", Arguments: `{"location": "San Francisco"}`}},
			Usage:     usage(339, 83, 422, 320, 39),
			Finish:    provider.FinishToolCalls,
		}},
		{"vercel_groq-tool-call.chunks.jsonl", summary{
			ToolCalls: []provider.ToolCall{{ID: "tk85n1k4m", Name: "weather", Arguments: `{}`}},
			Usage:     usage(210, 15, 225, 0, 0),
			Finish:    provider.FinishToolCalls,
		}},
		{"vercel_anthropic-openai-compat-tool-call.sse", summary{
			Text:      "Reading it.",
			ToolCalls: []provider.ToolCall{{ID: "toolu_sanitized", Name: "read_file", Arguments: `{"path": "a.txt"}`}},
			Finish:    provider.FinishToolCalls,
		}},
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "openai-chat"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.file] = true
	}
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".sse") || strings.HasSuffix(n, ".jsonl")) && !covered[n] {
			t.Errorf("fixture %s has no expectation", n)
		}
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			srv := edgetest.NewServer(t, edgetest.SSEHandler(fixtureBody(t, tc.file)))
			got, _, err := streamFrom(t, testProvider(t, srv, nil))
			if err != nil {
				t.Fatalf("Err() = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFixtureEventOrder pins the exact event sequence of two fixtures: text
// as it arrives, tool calls at finish_reason, usage, then finish.
func TestFixtureEventOrder(t *testing.T) {
	providertest.CheckEventOrder(t, []providertest.EventOrder{
		{"vercel_anthropic-openai-compat-tool-call.sse", []provider.StreamEvent{
			{Kind: provider.EventText, Text: "Reading"},
			{Kind: provider.EventText, Text: " it."},
			{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: "toolu_sanitized", Name: "read_file", Arguments: `{"path": "a.txt"}`}},
			{Kind: provider.EventFinish, FinishReason: provider.FinishToolCalls},
		}},
		{"openai-python_parallel-tool-calls.sse", []provider.StreamEvent{
			{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`}},
			{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price", Arguments: `{"ticker": "AAPL", "exchange": "NASDAQ"}`}},
			{Kind: provider.EventUsage, Usage: *usage(149, 60, 209, 0, 0)},
			{Kind: provider.EventFinish, FinishReason: provider.FinishToolCalls},
		}},
		{"vercel_groq-tool-call.chunks.jsonl", []provider.StreamEvent{
			{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: "tk85n1k4m", Name: "weather", Arguments: `{}`}},
			{Kind: provider.EventUsage, Usage: *usage(210, 15, 225, 0, 0)},
			{Kind: provider.EventFinish, FinishReason: provider.FinishToolCalls},
		}},
	}, decodeFixture)
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
