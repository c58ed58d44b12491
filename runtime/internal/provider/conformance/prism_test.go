package conformance

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/provider/chat"
	"octet.dev/host/runtime/internal/provider/messages"
	"octet.dev/host/runtime/internal/provider/responses"
	"octet.dev/host/runtime/provider"
)

// conversation exercises every shape a request can carry: system prompt,
// user text, assistant text with reasoning blocks (signed, redacted,
// interleaved after a call) of both reasoning wires, of which each mode
// sends its own, parallel tool calls, an error result, a call without
// arguments, tools.
func conversation() provider.Request {
	return provider.Request{
		Model:  "model",
		System: "Be brief.",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Text: "Weather in Paris and Rome?"},
			{
				Role: provider.RoleAssistant, Text: "Checking both.", Reasoning: "Two cities. Then one more.",
				ReasoningBlocks: []provider.ReasoningBlock{
					{Text: "Two cities.", Signature: "EqQBCkYIBxgCKkA=", Wire: provider.WireMessages},
					{Redacted: "EmwKAhgBEgy3va3pzix", Wire: provider.WireMessages},
					{Text: " Then one more.", Signature: "EqQBCkYIBxgCKkB=", Wire: provider.WireMessages, AfterToolCalls: 1},
					{Text: "Two cities.", Signature: "gAAAAABoZW5jcnlwdGVkLTE=", ID: "rs_01", Wire: provider.WireResponses},
					{Text: " Then one more.", Signature: "gAAAAABoZW5jcnlwdGVkLTI=", ID: "rs_02", Wire: provider.WireResponses, AfterToolCalls: 1},
				},
				ToolCalls: []provider.ToolCall{
					{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
					{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Rome"}`},
				},
			},
			{Role: provider.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Text: "18C"},
			{Role: provider.RoleTool, ToolCallID: "call_2", ToolName: "get_weather", Text: "denied", IsError: true},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "call_3", Name: "noop"}}},
			{Role: provider.RoleTool, ToolCallID: "call_3", ToolName: "noop", Text: ""},
			{Role: provider.RoleAssistant, Text: "Paris 18C; Rome unknown."},
			{Role: provider.RoleUser, Text: "Thanks."},
		},
		Tools: []provider.ToolSpec{
			{Name: "get_weather", Description: "Get weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "noop", Parameters: []byte(`{"type":"object","properties":{}}`)},
		},
		MaxOutputTokens: 32000,
	}
}

// withMedia returns req with an image (png) and, when audio is true, an
// audio item (wav) added to its last user message.
func withMedia(req provider.Request, audio bool) provider.Request {
	req.Messages = slices.Clone(req.Messages)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := &req.Messages[i]
		if m.Role != provider.RoleUser {
			continue
		}
		png := []byte("\x89PNG\r\n\x1a\nfake")
		m.Media = append(slices.Clip(m.Media), provider.Media{
			Type: provider.MediaImage, MIMEType: "image/png", Format: "png", Bytes: int64(len(png)), Data: png,
		})
		if audio {
			wav := []byte("RIFF\x24\x00\x00\x00WAVEfake")
			m.Media = append(m.Media, provider.Media{
				Type: provider.MediaAudio, MIMEType: "audio/wav", Format: "wav", Bytes: int64(len(wav)), Data: wav,
			})
		}
		break
	}
	return req
}

// recorder keeps the last request body sent and the last answer received,
// so that a refusal shows what was refused and why in full.
type recorder struct {
	sent, answer []byte
	header       http.Header
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		r.sent, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(r.sent))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.answer, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(r.answer))
	r.header = resp.Header
	return resp, nil
}

type streamer interface {
	Stream(context.Context, provider.Request) (provider.Stream, error)
}

// check sends req and fails on a 422 (the validator's verdict on a body that
// breaks the schema) or a 404 (a path the document does not have). A valid
// body gets the validator's example answer, which is not a stream: its
// decoding error is expected and ignored.
func check(t *testing.T, rec *recorder, p streamer, req provider.Request) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.Stream(ctx, req)
	if err == nil {
		for s.Next() {
		}
		err = s.Err()
		s.Close()
	}
	var pe *provider.Error
	if errors.As(err, &pe) && (pe.Status == http.StatusUnprocessableEntity || pe.Status == http.StatusNotFound) {
		t.Errorf("the validator refused the body (%d): %s\nviolations: %s\nbody: %s", pe.Status, rec.answer, rec.header.Get("sl-violations"), rec.sent)
	}
}

func validator(t *testing.T, env string) string {
	u := os.Getenv(env)
	if u == "" {
		t.Skipf("%s not set: run scripts/prism-check", env)
	}
	return u
}

func TestAnthropicMessages(t *testing.T) {
	base := validator(t, "OCTET_PRISM_ANTHROPIC")
	for _, tc := range []struct {
		name     string
		model    string
		effort   string
		adaptive bool
	}{
		{"no thinking", "claude-haiku-4-5", "", false},
		{"budget thinking", "claude-haiku-4-5", "high", false},
		{"adaptive thinking", "claude-opus-4-8", "medium", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			p, err := messages.New(messages.Config{BaseURL: base, APIKey: "sk-ant-test", AdaptiveThinking: tc.adaptive, HTTPClient: &http.Client{Transport: rec}})
			if err != nil {
				t.Fatal(err)
			}
			req := conversation()
			req.Model, req.ReasoningEffort = tc.model, tc.effort
			check(t, rec, p, req)
		})
	}
	t.Run("images", func(t *testing.T) {
		rec := &recorder{}
		p, err := messages.New(messages.Config{BaseURL: base, APIKey: "sk-ant-test", HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		req := withMedia(conversation(), false)
		req.Model = "claude-haiku-4-5"
		check(t, rec, p, req)
	})
}

func TestOpenAIChat(t *testing.T) {
	base := validator(t, "OCTET_PRISM_OPENAI")
	for _, effort := range []string{"", "low"} {
		t.Run("effort="+effort, func(t *testing.T) {
			rec := &recorder{}
			p, err := chat.New(chat.Config{BaseURL: base + "/v1", APIKey: "sk-test", HTTPClient: &http.Client{Transport: rec}})
			if err != nil {
				t.Fatal(err)
			}
			req := conversation()
			req.Model, req.ReasoningEffort = "gpt-4.1", effort
			check(t, rec, p, req)
		})
	}
	t.Run("image and audio", func(t *testing.T) {
		rec := &recorder{}
		p, err := chat.New(chat.Config{BaseURL: base + "/v1", APIKey: "sk-test", HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		req := withMedia(conversation(), true)
		req.Model = "gpt-4o-audio-preview"
		check(t, rec, p, req)
	})
}

func TestOpenAIResponses(t *testing.T) {
	base := validator(t, "OCTET_PRISM_OPENAI")
	for _, encrypted := range []bool{false, true} {
		t.Run("", func(t *testing.T) {
			rec := &recorder{}
			p, err := responses.New(responses.Config{BaseURL: base + "/v1", APIKey: "sk-test", IncludeEncryptedReasoning: encrypted, HTTPClient: &http.Client{Transport: rec}})
			if err != nil {
				t.Fatal(err)
			}
			req := conversation()
			req.Model, req.ReasoningEffort = "gpt-5.4", "medium"
			check(t, rec, p, req)
		})
	}
	t.Run("images", func(t *testing.T) {
		rec := &recorder{}
		p, err := responses.New(responses.Config{BaseURL: base + "/v1", APIKey: "sk-test", HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		req := withMedia(conversation(), false)
		req.Model, req.ReasoningEffort = "gpt-5.4", "medium"
		check(t, rec, p, req)
	})
}
