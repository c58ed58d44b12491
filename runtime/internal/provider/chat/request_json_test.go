package chat

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
	"pgregory.net/rapid"

	"octet.dev/host/runtime/provider"
)

// text draws a string that exercises the quoting: HTML-significant and
// control characters, quotes, backslashes, U+2028, multi-byte runes and,
// now and then, bytes that are not UTF-8.
func text(t *rapid.T, label string) string {
	pieces := []string{"", "a", "héllo", "<b>&amp;</b>", "\"q\"", `back\slash`, "\n\t\r", "\x00\x1f\x7f",
		"\u2028\u2029", "日本語", "😀", "\xff\xfe", "a\xc3", "{\"json\":[1,2]}", " "}
	var b []byte
	for range rapid.IntRange(0, 4).Draw(t, label+"-n") {
		b = append(b, rapid.SampledFrom(pieces).Draw(t, label)...)
	}
	return string(b)
}

// schemas are parameter schemas as tools declare them, with the spacing
// and escapes a hand-written one may have.
var schemas = [][]byte{
	nil,
	[]byte(`{"type":"object","properties":{}}`),
	[]byte(`{ "type" : "object",
	  "properties" : { "path" : { "type" : "string", "description" : "a \u00e9 \/ \"path\"" } },
	  "required" : [ "path" ] }`),
	[]byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":1.50e2,"maximum":-0}}}`),
	[]byte(`{"a":"<>&\u2028","b":[true,false,null]}`),
}

func drawRequest(t *rapid.T) (provider.Request, *chatAudio) {
	req := provider.Request{
		Model:           rapid.SampledFrom([]string{"m", "gpt-x", "llama<3>"}).Draw(t, "model"),
		System:          text(t, "system"),
		MaxOutputTokens: rapid.SampledFrom([]int{0, -1, 1, 4096}).Draw(t, "max"),
		ReasoningEffort: rapid.SampledFrom([]string{"", "low", "high"}).Draw(t, "effort"),
		CacheKey:        rapid.SampledFrom([]string{"", "key-1"}).Draw(t, "cachekey"),
	}
	for i := range rapid.IntRange(0, 6).Draw(t, "messages") {
		m := provider.Message{Role: rapid.SampledFrom([]provider.Role{provider.RoleUser, provider.RoleAssistant, provider.RoleTool, provider.RoleDeveloper}).Draw(t, "role")}
		m.Text = text(t, "text")
		switch m.Role {
		case provider.RoleUser:
			for range rapid.IntRange(0, 2).Draw(t, "media") {
				if rapid.Bool().Draw(t, "image") {
					m.Media = append(m.Media, provider.Media{Type: provider.MediaImage, MIMEType: "image/png", Format: "png", Data: []byte{0x89, 'P', 'N', 'G', byte(i)}})
				} else {
					m.Media = append(m.Media, provider.Media{Type: provider.MediaAudio, MIMEType: "audio/wav", Format: "wav", Data: []byte("RIFF")})
				}
			}
		case provider.RoleAssistant:
			for range rapid.IntRange(0, 2).Draw(t, "calls") {
				m.ToolCalls = append(m.ToolCalls, provider.ToolCall{
					ID:        rapid.SampledFrom([]string{"", "call_1", "call_2"}).Draw(t, "id"),
					Name:      rapid.SampledFrom([]string{"read", "bash"}).Draw(t, "name"),
					Arguments: rapid.SampledFrom([]string{"", "{}", `{"path":"a\u00e9"}`, "not json <&>"}).Draw(t, "args"),
				})
			}
		case provider.RoleTool:
			m.ToolCallID = rapid.SampledFrom([]string{"call_1", "call_9", ""}).Draw(t, "result-of")
		}
		req.Messages = append(req.Messages, m)
	}
	for range rapid.IntRange(0, 3).Draw(t, "tools") {
		req.Tools = append(req.Tools, provider.ToolSpec{
			Name:        rapid.SampledFrom([]string{"read", "bash", "my<tool>"}).Draw(t, "tool"),
			Description: text(t, "description"),
			Parameters:  rapid.SampledFrom(schemas).Draw(t, "schema"),
		})
	}
	var audio *chatAudio
	if rapid.Bool().Draw(t, "audio") {
		audio = &chatAudio{Voice: DefaultVoice, Format: AudioFormat}
	}
	return req, audio
}

// TestRequestBytes: the direct encoder writes every body byte for byte as
// the reflective one does (json.Marshal with marshalOpts), and the tool
// array it measures is the one the body carries.
func TestRequestBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req, audio := drawRequest(t)
		body, err := requestBody(req, audio)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(&body, marshalOpts)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := body.appendJSON(nil)
		if !ok {
			t.Fatal("the direct encoder gave up on a body requestBody built")
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("direct encoding differs:\n got %s\nwant %s", got, want)
		}
		built, err := buildRequestAudio(req, audio)
		if err != nil || !bytes.Equal(built, want) {
			t.Fatalf("buildRequestAudio: %v\n got %s\nwant %s", err, built, want)
		}
		if len(body.Tools) > 0 {
			tools, err := json.Marshal(body.Tools, marshalOpts)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := (&Provider{}).ToolArrayBytes(req.Tools); err != nil || n != len(tools) {
				t.Fatalf("ToolArrayBytes = %d, %v; the array is %d bytes", n, err, len(tools))
			}
		}
	})
}

// TestRequestBytesFallBack: a content value of a type the encoder does not
// know makes it give up, and the body is then marshalled reflectively.
func TestRequestBytesFallBack(t *testing.T) {
	body := chatRequest{Model: "m", Messages: []chatMessage{{Role: "user", Content: 42}}}
	if _, ok := body.appendJSON(nil); ok {
		t.Fatal("the direct encoder wrote a content value of a type it does not know")
	}
}

// BenchmarkRequestBody encodes the body of a 200-message conversation
// with the six tools, directly (the requests' way) and reflectively (the
// yardstick the direct encoder replaces).
func BenchmarkRequestBody(b *testing.B) {
	req := provider.Request{Model: "m", System: "You are a coding agent."}
	for i := range 100 {
		req.Messages = append(req.Messages,
			provider.Message{Role: provider.RoleUser, Text: "Please read notes.txt and tell me what it says, step " + string(rune('a'+i%26))},
			provider.Message{Role: provider.RoleAssistant, Text: "It says that the answer is 42, with a \"quote\" and a tab\t."})
	}
	for _, s := range schemas[1:] {
		req.Tools = append(req.Tools, provider.ToolSpec{Name: "tool", Description: "Reads a file of the workspace.", Parameters: s})
	}
	body, err := requestBody(req, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := body.appendJSON(make([]byte, 0, sizeHint(req))); !ok {
				b.Fatal("gave up")
			}
		}
	})
	b.Run("reflective", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&body, marshalOpts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
