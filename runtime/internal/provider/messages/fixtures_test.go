package messages

import (
	"bytes"
	"net/http"
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
	return providertest.New(t, New, Config{BaseURL: srv.URL, APIKey: testKey, HTTPClient: edgetest.Client(t)}, mod)
}

const testKey = "sk-ant-api03-test-0123456789abcdefSECRET"

// fixtureBody returns the body to serve for a fixture: .sse files raw,
// .chunks.jsonl files as one "event: <type>" + "data: <line>" event per
// line, <type> being the line's JSON type (fixtures/providers/SOURCES.md).
func fixtureBody(t testing.TB, name string) []byte {
	t.Helper()
	raw := edgetest.ReadFixture(t, filepath.Join("testdata", "anthropic"), name)
	if strings.HasSuffix(name, ".sse") {
		return raw
	}
	return edgetest.TypedEvents(t, name, raw)
}

// fixtureHandler serves a fixture with the status and headers recorded with
// it, when there are any, else as plain text/event-stream.
func fixtureHandler(t *testing.T, name string) http.HandlerFunc {
	t.Helper()
	body := fixtureBody(t, name)
	stem := strings.TrimSuffix(strings.TrimSuffix(name, ".sse"), ".chunks.jsonl")
	rec := edgetest.ReadRecorded(t, filepath.Join("testdata", "anthropic", stem+".headers.json"), false)
	return rec.Handler(body, "Date") // the test server's own framing
}

var simpleRequest = provider.Request{
	Model:    "claude-test",
	Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}},
}

func streamFrom(t *testing.T, p *Provider) (summary, []provider.StreamEvent, error) {
	t.Helper()
	return suite.StreamFrom(t, p)
}

// usage builds the expected neutral usage from the wire figures: input is
// Anthropic's input_tokens, without the cache figures.
func usage(input, cacheRead, cacheWrite, output, thinking int64) *provider.Usage {
	in := input + cacheRead + cacheWrite
	return &provider.Usage{
		InputTokens: in, OutputTokens: output, CacheReadTokens: cacheRead, CacheWriteTokens: cacheWrite,
		ReasoningTokens: thinking, TotalTokens: in + output,
	}
}

// Signatures of the recorded thinking blocks.
const (
	sigAdaptive     = "EtABCkYICxgCKkCVRmhlD4SUFC1JfxwvjOHbkC3CPAIcWq1zn348H+o2blk997x12Vc5JMyLNWxB6/bjLXUlJbHrROizHnvNtDaXEgz6UEiizB6ShSqw9cMaDN3d+Ba0ENx0lUZk7CIwdsIvrlZbePn/CAF9+CeoO/fH53/gbO/WN3Effb0D41XifY7gyfQ8ftQWSLcsH+63KjjJYfLppl3C5/75CQsFv+3XvurDwcdYbguoPM0RDiBHB2JRX/gKF0vzMKik41tZsSGAoENhIz4SWxgB"
	sigThinkingLong = "EvoCCkYICxgCKkCY593DZILKPT3+cK6Py3Hcu8WYGSW2vk6yge13JAuAYlQFzUC2c6UlsIWiBMvJjtDc6zfh73EOpWqxYB+pOh5zEgxoquY58aQkL5YJ9YUaDJpBRqMUVxU6SPYLRCIwcxSHXlhIWQw0QhiPV+lrMXgTdk4SuJnWVpHc+uTSxYmxetnHugsdCo6xWShRJaQLKuEBsfQzKHid0WmA8hdgz0mVpI+nAPvnhpHFIZbnGl2HQi7cc87o/HZzCod2tF8mEuqdyNtPHgx+H+Zyr/Pi0kmJF6hOoylmR5nGrXeqR1ttWFzzPF7XpmIr+vw3y/rNCDQVRWxmG/IDyHVLKXtALaFnDpNfvSGv6L3udrgkeWuV2VEzfGPclEIaailiMsxesYC/LJGUcPlqZ9kL18GQ16lr15u6kOUMlyYKA7AoeL6K7U3qCvpSdfGpMfgkasK5ugj0FL3UgFpUrrFbPlpLAdLsNeG2G+XBiOY0TtfokCiI1P7LGAE="
	sigThenTool     = "EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1VIXCRHVnhDDzBQxNF1fl4QBXEKLxRItNJ2MwFdW9eeZPhsxSQIxD54cv3zs29MhljbGF1ZGUtaGFpa3UtNC01LTIwMjUxMDAxOABCCHRoaW5raW5nEgy/OWlwTmmqUjC6L70aDJ4P0R5NfuIe9U5zAiIwCxPduXS2UxCNxJCee3i91qK3cAyAgxCjL2wkQ5UD56iX1hXGOyuNaiH5k+dF5OCQKsQBxiAo+NjC61hV8nRYtaiP+C4inOcuMKuTG9Z1rysxTXkKBTl3oMiOlnEPHHPpKpg4sYF2G5VoTg8JTon20hdZw4GfTEVupnU1qAmnMqyAgke9SoV7HBW/PyA/FxL/q33xJ2gKFiD+BsgI9Z0koMmFKCvm2MoYE6u+ONEwKdFQXL1FKRW6t/bYbJGrLJLwxilsL82h9j4xjggjMn8Npvpn+zsrDPW/8PuLd4Pu+/EsjoneYwyxQQtUVgzhVGhhANWRjSBwUxgB"
	sigSonnet5      = "EsECCokBCBAYAipA9i3HF1aHpQITkdN8OvLd33gdPZEyLKJA9EvxTXumYzG5xgpLkCYbGOTUkjuimP/4sMuSvrTX1hLxRAhUtlZnJzIPY2xhdWRlLXNvbm5ldC01OABCCHRoaW5raW5nWiQzYjkzYTVkZC03MzAyLTQ4M2YtYWVhZS0zNjIwNzU1NDhhZTESDAbvSPk/+y/ldBqv6BoMOCYOaXUugWqs6kXXIjBQ973isavJRdWK+d8zBKNmf0l9l9StDUo6wz8ZJrP8abCvbRLiPjjKLqPZaJUTcG4qZTHhVwzkEB7BbnEr2qzxHut5kzxg7E5rD5hCZHbjCwAYtMeAPZJOo8jigNCG2O745nj6veI330HlHPvUtHunqKgGqmnSilo4ucvTVAqF0qr0BkXSwZq2JlnKeXmFLtlg+1I6L4oPGAE="
)

const gcdText = "# Finding GCD(1071, 462) Using the Euclidean Algorithm\n\n" +
	"## Step 1: Divide 1071 by 462\n$$1071 = 2 \\times 462 + 147$$\n(since 2 × 462 = 924, and 1071 − 924 = 147)\n\n" +
	"## Step 2: Divide 462 by 147\n$$462 = 3 \\times 147 + 21$$\n(since 3 × 147 = 441, and 462 − 441 = 21)\n\n" +
	"## Step 3: Divide 147 by 21\n$$147 = 7 \\times 21 + 0$$\n(since 7 × 21 = 147, remainder is 0)\n\n" +
	"## Conclusion\nSince the remainder is now 0, the algorithm stops. The last non-zero remainder is **21**.\n\n" +
	"$$\\gcd(1071, 462) = 21$$\n\n" +
	"**Verification:** \n- 1071 = 21 × 51 ✓\n- 462 = 21 × 22 ✓"

const quotedToolInput = `{"website_path": "/home/user/pace-landing", "tasks": [{"description": "Today you post every run to Strava, ` +
	`but Strava does not answer the question: \"What should I do next after this run?\". It is a great log, but it is not adaptive.", ` +
	`"type": "feature", "passes": false}]}`

// fixtureTests are the expectations for every stream fixture.
var fixtureTests = []struct {
	file string
	want summary
}{
	{"anthropic-sdk-go_text-then-tool-use.sse", summary{
		Text:      "I'll get the current weather in San Francisco for you in Fahrenheit.",
		ToolCalls: []provider.ToolCall{{ID: "toolu_01RaX2WYWRWCbaeFHssmGJXG", Name: "get_weather", Arguments: `{"city": "San Francisco", "units": "fahrenheit"}`}},
		Usage:     usage(397, 0, 0, 89, 0),
		Finish:    provider.FinishToolCalls,
	}},
	{"anthropic-sdk-go_final-text-after-tool.sse", summary{
		Text:   "The current weather in San Francisco is 68 degrees Fahrenheit.",
		Usage:  usage(509, 0, 0, 19, 0),
		Finish: provider.FinishStop,
	}},
	{"anthropic-sdk-python_basic.sse", summary{
		Text:   "Hello there!",
		Usage:  usage(11, 0, 0, 6, 0),
		Finish: provider.FinishStop,
	}},
	{"anthropic-sdk-python_tool-use.sse", summary{
		Text:      "I'll check the current weather in Paris for you.",
		ToolCalls: []provider.ToolCall{{ID: "toolu_01NRLabsLyVHZPKxbKvkfSMn", Name: "get_weather", Arguments: `{"location": "Paris"}`}},
		Usage:     usage(377, 0, 0, 65, 0),
		Finish:    provider.FinishToolCalls,
	}},
	{"anthropic-sdk-python_max-tokens-mid-tool-input.sse", summary{
		// The make_file call was cut inside its input: never a tool call.
		Text:   "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file called taxes.txt. Let me do that for you now.",
		Usage:  usage(450, 0, 0, 124, 0),
		Finish: provider.FinishLength,
	}},
	{"anthropic-sdk-python_refusal.HANDMADE.sse", summary{
		Text:   "This request was refused due to policy.", // stop_details.explanation
		Usage:  usage(20, 0, 0, 0, 0),
		Finish: provider.FinishRefusal,
	}},
	{"llm-anthropic_text.sse", summary{
		Text:   "Hello",
		Usage:  usage(10, 0, 0, 4, 0),
		Finish: provider.FinishStop,
	}},
	{"llm-anthropic_thinking-long.sse", summary{
		Text: "- Captain\n- Scoop",
		Reasoning: "The user wants two names for a pet pelican, and wants me to be brief. I'll give two simple, fitting names." +
			"\n\nSome options:\n- Pete\n- Percy\n- Captain\n- Scoop\n- Bill\n- Gully\n\nI'll pick two good ones and keep it very short.",
		Usage:  usage(46, 0, 0, 84, 0),
		Finish: provider.FinishStop,
	}.Signed(sigThinkingLong)},
	{"llm-anthropic_adaptive-thinking-opus-4-6.sse", summary{
		Text:      "\n\n1. **Captain Scoop**\n2. **Gullet**",
		Reasoning: "Brief answer with two pet pelican names.",
		Usage:     usage(34, 0, 0, 44, 0),
		Finish:    provider.FinishStop,
	}.Signed(sigAdaptive)},
	{"llm-anthropic_thinking-then-tool-use.sse", summary{
		Reasoning: "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n3. Make a short joke about it\n\nLet me first call the fixed_version tool to see what version it returns.",
		ToolCalls: []provider.ToolCall{{ID: "toolu_01825dXWLSoJwCst1qTsiWdb", Name: "fixed_version", Arguments: `{}`}},
		Usage:     usage(598, 0, 0, 92, 53),
		Finish:    provider.FinishToolCalls,
	}.Signed(sigThenTool)},
	{"llm-anthropic_after-tool-with-thinking.sse", summary{
		Text: "The version is **0.32a0**.\n\nHere's a joke about it: \n\nLooks like this version is still in alpha testing... " +
			"I guess you could say it's going through a \"0.32a good time\" before becoming stable! 😄\n\n" +
			"(It's at version 0.32a, which means it's far from 1.0, so plenty of room to grow!)",
		Usage:  usage(707, 0, 0, 89, 0),
		Finish: provider.FinishStop,
	}},
	{"llm-anthropic_tool-use-no-thinking.sse", summary{
		ToolCalls: []provider.ToolCall{{ID: "toolu_01UmKD1vMphVCN9vw8PEMk1q", Name: "fixed_version", Arguments: `{}`}},
		Usage:     usage(563, 0, 0, 37, 0),
		Finish:    provider.FinishToolCalls,
	}},
	{"vercel_text.chunks.jsonl", summary{
		Text:   "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
		Usage:  usage(12, 0, 0, 30, 0),
		Finish: provider.FinishStop,
	}},
	{"vercel_text-and-json-tool.chunks.jsonl", summary{
		Text:      "I'll invoke the JSON response tool.",
		ToolCalls: []provider.ToolCall{{ID: "toolu_01KFbKqPYSuAKujiL6mTfzYA", Name: "json", Arguments: `{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}`}},
		Usage:     usage(849, 0, 0, 47, 0),
		Finish:    provider.FinishToolCalls,
	}},
	{"vercel_sonnet-5-thinking-summarized.chunks.jsonl", summary{
		Text:      gcdText,
		Reasoning: "I'm working through the Euclidean algorithm to find the GCD of 1071 and 462, applying successive division until I reach a remainder of zero, which gives me 21 as the greatest common divisor.",
		Usage:     usage(47, 0, 0, 373, 62),
		Finish:    provider.FinishStop,
	}.Signed(sigSonnet5)},
	{"vercel_message-delta-input-tokens.chunks.jsonl", summary{
		// message_delta's input_tokens (61) replaces message_start's (43).
		Text:   "pong",
		Usage:  usage(61, 0, 0, 2, 0),
		Finish: provider.FinishStop,
	}},
	{"vercel_tool-no-args.chunks.jsonl", summary{
		Text:      "I'll update the issue list for you.",
		ToolCalls: []provider.ToolCall{{ID: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", Name: "updateIssueList", Arguments: `{}`}},
		Usage:     usage(565, 0, 0, 48, 0),
		Finish:    provider.FinishToolCalls,
	}},
	{"vercel_quoted-tool-input.chunks.jsonl", summary{
		ToolCalls: []provider.ToolCall{{ID: "toolu_01Cr31vcGoeeRgi3Eo5Ds8qN", Name: "website_update", Arguments: quotedToolInput}},
		Usage:     usage(912, 0, 0, 118, 0),
		Finish:    provider.FinishToolCalls,
	}},
}

// TestFixtureCoverage fails when a fixture has no expectation, or a headers
// file no stream.
func TestFixtureCoverage(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "anthropic"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, tc := range fixtureTests {
		covered[tc.file] = true
	}
	streams := 0
	for _, e := range entries {
		n := e.Name()
		switch {
		case e.IsDir() || n == "SOURCES.md":
		case strings.HasSuffix(n, ".headers.json"):
			if !covered[strings.TrimSuffix(n, ".headers.json")+".sse"] {
				t.Errorf("headers file %s has no tested .sse partner", n)
			}
		case strings.HasSuffix(n, ".sse") || strings.HasSuffix(n, ".chunks.jsonl"):
			streams++
			if !covered[n] {
				t.Errorf("fixture %s has no expectation", n)
			}
		default:
			t.Errorf("unexpected fixture file %s", n)
		}
	}
	if streams != len(fixtureTests) {
		t.Errorf("%d stream fixtures, %d expectations", streams, len(fixtureTests))
	}
}

func TestFixtures(t *testing.T) {
	for _, tc := range fixtureTests {
		t.Run(tc.file, func(t *testing.T) {
			srv := edgetest.NewServer(t, fixtureHandler(t, tc.file))
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

// TestFixtureEventOrder pins the exact event sequence of some fixtures:
// reasoning and text as they arrive, a signature at its block's stop, a
// tool call once its block is complete, then usage and finish.
func TestFixtureEventOrder(t *testing.T) {
	text := func(s string) provider.StreamEvent { return provider.StreamEvent{Kind: provider.EventText, Text: s} }
	providertest.CheckEventOrder(t, []providertest.EventOrder{
		{"anthropic-sdk-python_tool-use.sse", []provider.StreamEvent{
			text("I"),
			text("'ll check the current weather in Paris for you."),
			{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: "toolu_01NRLabsLyVHZPKxbKvkfSMn", Name: "get_weather", Arguments: `{"location": "Paris"}`}},
			{Kind: provider.EventUsage, Usage: *usage(377, 0, 0, 65, 0)},
			{Kind: provider.EventFinish, FinishReason: provider.FinishToolCalls},
		}},
		{"llm-anthropic_thinking-then-tool-use.sse", []provider.StreamEvent{
			{Kind: provider.EventReasoning, Text: "The user wants me to:\n1"},
			{Kind: provider.EventReasoning, Text: ". Use the fixed_version tool\n2. Tell them the version\n3. Make a short joke about it\n\nLet me first call the fixed_version tool to see what version it returns."},
			{Kind: provider.EventReasoning, Signature: sigThenTool},
			{Kind: provider.EventToolCall, ToolCall: provider.ToolCall{ID: "toolu_01825dXWLSoJwCst1qTsiWdb", Name: "fixed_version", Arguments: `{}`}},
			{Kind: provider.EventUsage, Usage: *usage(598, 0, 0, 92, 53)},
			{Kind: provider.EventFinish, FinishReason: provider.FinishToolCalls},
		}},
		{"anthropic-sdk-python_max-tokens-mid-tool-input.sse", []provider.StreamEvent{
			text("I"),
			text("'ll create a comprehensive tax guide for"),
			text(" someone with multiple W2s an"),
			text("d save it in a file called taxes.txt. Let"),
			text(" me do that for you now."),
			{Kind: provider.EventUsage, Usage: *usage(450, 0, 0, 124, 0)},
			{Kind: provider.EventFinish, FinishReason: provider.FinishLength},
		}},
		{"anthropic-sdk-python_refusal.HANDMADE.sse", []provider.StreamEvent{
			text("This request was refused due to policy."),
			{Kind: provider.EventUsage, Usage: *usage(20, 0, 0, 0, 0)},
			{Kind: provider.EventFinish, FinishReason: provider.FinishRefusal},
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

// checkNonEmpty is this package's own drain rule: no empty content events.
func checkNonEmpty(t testing.TB, ev provider.StreamEvent) {
	t.Helper()
	switch {
	case ev.Kind == provider.EventText && ev.Text == "":
		t.Fatal("empty EventText")
	case ev.Kind == provider.EventReasoning && ev.Text == "" && ev.Signature == "" && ev.Redacted == "":
		t.Fatal("empty EventReasoning")
	}
}
