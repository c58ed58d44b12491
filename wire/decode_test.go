package wire

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

func TestDecodeErrors(t *testing.T) {
	const env = `"protocol_version":1,"request_id":"r1",`
	const run = `"command":"run","run_id":"run-1","workspace":"/w","model":"m","prompt":"p"`
	tests := []struct {
		name   string
		line   string
		code   protocol.Code
		reqID  string
		msgHas string
	}{
		{"empty", ``, protocol.CodeInvalidJSON, "", "empty line"},
		{"whitespace only", " \t ", protocol.CodeInvalidJSON, "", "empty line"},
		{"invalid utf8", "{\"request_id\":\"\xff\"}", protocol.CodeInvalidUTF8, "", "UTF-8"},
		{"not json", `hello`, protocol.CodeInvalidJSON, "", "invalid JSON"},
		{"truncated", `{"protocol_version":1,"request_id":"r1"`, protocol.CodeInvalidJSON, "", "end of line"},
		{"array", `[1,2]`, protocol.CodeNotAnObject, "", "an array"},
		{"string", `"x"`, protocol.CodeNotAnObject, "", "a string"},
		{"null", `null`, protocol.CodeNotAnObject, "", "null"},
		{"trailing object", `{` + env + `"command":"hello"}{}`, protocol.CodeInvalidJSON, "", "trailing"},
		{"trailing garbage", `{` + env + `"command":"hello"} x`, protocol.CodeInvalidJSON, "", "trailing"},
		{"duplicate top-level", `{` + env + `"command":"hello","command":"hello"}`, protocol.CodeDuplicateField, "r1", `"command"`},
		{"duplicate request_id", `{"protocol_version":1,"request_id":"a","request_id":"b","command":"hello"}`, protocol.CodeDuplicateField, "", `"request_id"`},
		{"duplicate nested", `{` + env + run + `,"custom_headers":{"a":"1","a":"2"}}`, protocol.CodeDuplicateField, "r1", `"a"`},
		{"missing request_id", `{"protocol_version":1,"command":"hello"}`, protocol.CodeMissingField, "", `"request_id"`},
		{"request_id number", `{"protocol_version":1,"request_id":7,"command":"hello"}`, protocol.CodeInvalidField, "", "a number"},
		{"request_id null", `{"protocol_version":1,"request_id":null,"command":"hello"}`, protocol.CodeInvalidField, "", "null"},
		{"request_id empty", `{"protocol_version":1,"request_id":"","command":"hello"}`, protocol.CodeInvalidID, "", "request_id"},
		{"request_id slash", `{"protocol_version":1,"request_id":"a/b","command":"hello"}`, protocol.CodeInvalidID, "", "request_id"},
		{"request_id too long", `{"protocol_version":1,"request_id":"` + strings.Repeat("a", 129) + `","command":"hello"}`, protocol.CodeInvalidID, "", "request_id"},
		{"missing protocol_version", `{"request_id":"r1","command":"hello"}`, protocol.CodeMissingField, "r1", "protocol_version"},
		{"protocol_version string", `{"protocol_version":"1","request_id":"r1","command":"hello"}`, protocol.CodeInvalidField, "r1", "a string"},
		{"protocol_version 2", `{"protocol_version":2,"request_id":"r1","command":"hello"}`, protocol.CodeUnsupportedProtocolVersion, "r1", "2"},
		{"protocol_version 1.0", `{"protocol_version":1.0,"request_id":"r1","command":"hello"}`, protocol.CodeUnsupportedProtocolVersion, "r1", "1.0"},
		{"missing command", `{` + env[:len(env)-1] + `}`, protocol.CodeMissingField, "r1", "command"},
		{"command number", `{` + env + `"command":1}`, protocol.CodeInvalidField, "r1", "command"},
		{"unknown command", `{` + env + `"command":"abort"}`, protocol.CodeUnknownCommand, "r1", `"abort"`},
		{"command wrong case", `{` + env + `"command":"Hello"}`, protocol.CodeUnknownCommand, "r1", `"Hello"`},
		{"unknown member hello", `{` + env + `"command":"hello","x":1}`, protocol.CodeUnknownField, "r1", `"x"`},
		{"case variant envelope", `{"protocol_version":1,"request_id":"r1","Request_ID":"r2","command":"hello"}`, protocol.CodeUnknownField, "r1", `did you mean "request_id"`},
		{"case variant run field", `{` + env + run + `,"Allow_File_Mutation":true}`, protocol.CodeUnknownField, "r1", `did you mean "allow_file_mutation"`},
		{"offline on hello", `{` + env + `"command":"hello","offline":true}`, protocol.CodeUnknownField, "r1", `"offline"`},
		{"resource_roots is the operator's", `{` + env + run + `,"resource_roots":["/r"]}`, protocol.CodeUnknownField, "r1", `"resource_roots"`},
		{"models offline string", `{` + env + `"command":"models","offline":"yes"}`, protocol.CodeInvalidField, "r1", "a boolean"},
		{"models offline null", `{` + env + `"command":"models","offline":null}`, protocol.CodeInvalidField, "r1", "null"},
		{"run missing run_id", `{` + env + `"command":"run","workspace":"/w","model":"m","prompt":"p"}`, protocol.CodeMissingField, "r1", `"run_id"`},
		{"run missing workspace", `{` + env + `"command":"run","run_id":"x","model":"m","prompt":"p"}`, protocol.CodeMissingField, "r1", `"workspace"`},
		{"run missing model", `{` + env + `"command":"run","run_id":"x","workspace":"/w","prompt":"p"}`, protocol.CodeMissingField, "r1", `"model"`},
		{"run missing prompt", `{` + env + `"command":"run","run_id":"x","workspace":"/w","model":"m"}`, protocol.CodeMissingField, "r1", `"prompt"`},
		{"run bad run_id", `{` + env + `"command":"run","run_id":"a b","workspace":"/w","model":"m","prompt":"p"}`, protocol.CodeInvalidID, "r1", "run_id"},
		{"run empty session_dir", `{` + env + run + `,"session_dir":""}`, protocol.CodeInvalidField, "r1", `"session_dir" must be a non-empty`},
		{"run bad session_id", `{` + env + run + `,"session_id":"../x"}`, protocol.CodeInvalidID, "r1", "session_id"},
		{"run prompt number", `{` + env + `"command":"run","run_id":"x","workspace":"/w","model":"m","prompt":1}`, protocol.CodeInvalidField, "r1", `"prompt" must be a string`},
		{"run tools not array", `{` + env + run + `,"tools":"read"}`, protocol.CodeInvalidField, "r1", "array of strings"},
		{"run tools number item", `{` + env + run + `,"tools":["read",1]}`, protocol.CodeInvalidField, "r1", `"tools/1"`},
		{"run tools null item", `{` + env + run + `,"tools":["read",null]}`, protocol.CodeInvalidField, "r1", "null"},
		{"run allow_file_mutation string", `{` + env + run + `,"allow_file_mutation":"true"}`, protocol.CodeInvalidField, "r1", "a boolean"},
		{"run max_steps fraction", `{` + env + run + `,"max_steps":1.5}`, protocol.CodeInvalidField, "r1", "an integer"},
		{"run max_steps huge", `{` + env + run + `,"max_steps":1e400}`, protocol.CodeInvalidField, "r1", "an integer"},
		{"run media unknown member", `{` + env + run + `,"media":[{"type":"image","path":"a","kind":"x"}]}`, protocol.CodeUnknownField, "r1", `"media/0/kind"`},
		{"run media case variant", `{` + env + run + `,"media":[{"Type":"image","path":"a"}]}`, protocol.CodeUnknownField, "r1", `"media/0/Type"`},
		{"run custom header number", `{` + env + run + `,"custom_headers":{"x":1}}`, protocol.CodeInvalidField, "r1", `"custom_headers/x"`},
		{"run reasoning unknown", `{` + env + run + `,"reasoning":{"effort":"low","budget":1}}`, protocol.CodeUnknownField, "r1", `"reasoning/budget"`},
		{"run history unknown", `{` + env + run + `,"history":[{"role":"user","text":"x"}]}`, protocol.CodeUnknownField, "r1", `"history/0/text"`},
		{"run media missing path", `{` + env + run + `,"media":[{"type":"image","path":"a"},{"type":"image"}]}`, protocol.CodeMissingField, "r1", `"media/1/path"`},
		{"run media missing type", `{` + env + run + `,"media":[{"path":"a"}]}`, protocol.CodeMissingField, "r1", `"media/0/type"`},
		{"run history missing content", `{` + env + run + `,"history":[{"role":"user"}]}`, protocol.CodeMissingField, "r1", `"history/0/content"`},
		{"run history missing role", `{` + env + run + `,"history":[{"content":"x"}]}`, protocol.CodeMissingField, "r1", `"history/0/role"`},
		{"run reasoning missing effort", `{` + env + run + `,"reasoning":{}}`, protocol.CodeMissingField, "r1", `"reasoning/effort"`},
		{"case variant envelope alone", `{"protocol_version":1,"Request_ID":"r2","command":"hello"}`, protocol.CodeUnknownField, "", `did you mean "request_id"`},
		{"case variant command alone", `{` + env + `"Command":"hello"}`, protocol.CodeUnknownField, "r1", `did you mean "command"`},
		{"huge protocol_version not echoed", `{"protocol_version":` + strings.Repeat("9", 900) + `,"request_id":"r1","command":"hello"}`, protocol.CodeUnsupportedProtocolVersion, "r1", "…"},
		{"lone surrogate echoes the id", `{` + env + `"command":"hello","x":"\ud800"}`, protocol.CodeInvalidJSON, "r1", "surrogate"},
		{"lone surrogate in the id", `{"protocol_version":1,"request_id":"\ud800","command":"hello"}`, protocol.CodeInvalidJSON, "", "surrogate"},
		{"run unknown member", `{` + env + run + `,"temperature":0.2}`, protocol.CodeUnknownField, "r1", `"temperature"`},
		{"long name not echoed", `{` + env + `"command":"hello","` + strings.Repeat("n", 5000) + `":1}`, protocol.CodeUnknownField, "r1", "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := Decode([]byte(tt.line))
			if err == nil {
				t.Fatalf("Decode succeeded: %+v", req)
			}
			if err.Code != tt.code || err.RequestID != tt.reqID {
				t.Errorf("Decode = {%s, request_id %q}, want {%s, %q}; message %q", err.Code, err.RequestID, tt.code, tt.reqID, err.Message)
			}
			if !strings.Contains(err.Message, tt.msgHas) {
				t.Errorf("message %q does not mention %q", err.Message, tt.msgHas)
			}
			if len(err.Message) > MaxMessageBytes {
				t.Errorf("message is %d bytes, bound %d", len(err.Message), MaxMessageBytes)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestDecodeOK(t *testing.T) {
	tests := []struct {
		name string
		line string
		want *Request
	}{
		{"hello", `{"protocol_version":1,"request_id":"probe-1","command":"hello"}`,
			&Request{RequestID: "probe-1", Command: "hello"}},
		{"member order free", `{"command":"shutdown","request_id":"s:1","protocol_version":1}`,
			&Request{RequestID: "s:1", Command: "shutdown"}},
		{"whitespace", " { \"protocol_version\" : 1 , \"request_id\" : \"a\" , \"command\" : \"hello\" } ",
			&Request{RequestID: "a", Command: "hello"}},
		{"models default", `{"protocol_version":1,"request_id":"m","command":"models"}`,
			&Request{RequestID: "m", Command: "models", Models: &protocol.ModelsRequest{}}},
		{"models offline", `{"protocol_version":1,"request_id":"m","command":"models","offline":true}`,
			&Request{RequestID: "m", Command: "models", Models: &protocol.ModelsRequest{Offline: true}}},
		{"run minimal", `{"protocol_version":1,"request_id":"req-1","command":"run","run_id":"run-1","workspace":"/srv/w","model":"gpt-5","prompt":"hi"}`,
			&Request{RequestID: "req-1", Command: "run", Run: &protocol.RunRequest{RunID: "run-1", Workspace: "/srv/w", Model: "gpt-5", Prompt: "hi"}}},
		{"run source example", `{"protocol_version":1,"request_id":"req-1","command":"run","run_id":"run-1","session_id":"customer-42","workspace":"/srv/workspace","session_dir":"/srv/state/octet-sessions","model":"gpt-5.6","prompt":"Summarize MEMORY.md","tools":["read"],"allow_file_mutation":false}`,
			&Request{RequestID: "req-1", Command: "run", Run: &protocol.RunRequest{RunID: "run-1", SessionID: ptr("customer-42"), Workspace: "/srv/workspace", SessionDir: ptr("/srv/state/octet-sessions"), Model: "gpt-5.6", Prompt: "Summarize MEMORY.md", Tools: &[]string{"read"}, AllowFileMutation: ptr(false)}}},
		{"run inline route", `{"protocol_version":1,"request_id":"req-local","command":"run","run_id":"run-local","workspace":"/srv/workspace","model":"local-model","provider":"local","base_url":"http://127.0.0.1:1234/v1","api_key":"secret","custom_headers":{"x-tenant":"example"},"provider_mode":"openai-compatible","context_window_tokens":32768,"max_output_tokens":4096,"input_modalities":["image"],"supports_reasoning":false,"prompt":"Reply with OK","tools":[]}`,
			&Request{RequestID: "req-local", Command: "run", Run: &protocol.RunRequest{RunID: "run-local", Workspace: "/srv/workspace", Model: "local-model", Prompt: "Reply with OK",
				Provider: ptr("local"), BaseURL: ptr("http://127.0.0.1:1234/v1"), APIKey: ptr("secret"), CustomHeaders: map[string]string{"x-tenant": "example"},
				ProviderMode: ptr("openai-compatible"), ContextWindowTokens: ptr(int64(32768)), MaxOutputTokens: ptr(int64(4096)), InputModalities: &[]string{"image"},
				SupportsReasoning: ptr(false), Tools: &[]string{}}}},
		{"run all optional", `{"protocol_version":1,"request_id":"r","command":"run","run_id":"x","workspace":"/w","model":"m","prompt":"p","system_prompt":"s","display_text":"d","media":[{"type":"image","path":"a.png"}],"vision":true,"history":[{"role":"user","content":"c"}],"max_steps":3,"reasoning":{"effort":"low"}}`,
			&Request{RequestID: "r", Command: "run", Run: &protocol.RunRequest{RunID: "x", Workspace: "/w", Model: "m", Prompt: "p", SystemPrompt: ptr("s"), DisplayText: ptr("d"),
				Media: []protocol.Media{{Type: "image", Path: "a.png"}}, Vision: ptr(true), History: []protocol.HistoryMessage{{Role: "user", Content: "c"}},
				MaxSteps: ptr(int64(3)), Reasoning: &protocol.Reasoning{Effort: "low"}}}},
		{"unicode prompt", `{"protocol_version":1,"request_id":"r","command":"run","run_id":"x","workspace":"/w","model":"m","prompt":"h\u00e9 ✓ \ud83d\ude00"}`,
			&Request{RequestID: "r", Command: "run", Run: &protocol.RunRequest{RunID: "x", Workspace: "/w", Model: "m", Prompt: "hé ✓ 😀"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.line))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidID(t *testing.T) {
	for _, id := range []string{"a", "A-z_0.9:", ".", "..", strings.Repeat("x", 128)} {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false", id)
		}
	}
	for _, id := range []string{"", " ", "a/b", "a\\b", "é", "a b", "a\x00", strings.Repeat("x", 129), "a+b"} {
		if ValidID(id) {
			t.Errorf("ValidID(%q) = true", id)
		}
	}
}
