package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"octet.dev/host/protocol"

	"octet.dev/host/runtime/fakeprovider"
)

// The run requests of the protocol source's examples, exactly as the source
// writes them. /srv/workspace and /srv/state stand for directories the test
// makes; nothing else is changed.
const (
	sourceExampleRun   = `{"protocol_version":1,"request_id":"req-1","command":"run","run_id":"run-1","session_id":"customer-42","workspace":"/srv/workspace","session_dir":"/srv/state/octet-sessions","model":"gpt-5.6","prompt":"Summarize MEMORY.md","tools":["read"],"allow_file_mutation":false}`
	sourceExampleMedia = `{"protocol_version":1,"request_id":"req-media","command":"run","run_id":"run-media","workspace":"/srv/workspace","model":"gpt-audio-1.5","prompt":"Compare the references and describe the music.","media":[{"type":"image","path":"/srv/workspace/moodboard/one.png"},{"type":"audio","path":"/srv/workspace/music/theme.wav"},{"type":"image","path":"/srv/workspace/moodboard/two.jpg"}]}`
)

// exampleRequest decodes a run line of the protocol strictly (a member this
// decoder does not map fails the test, so nothing of the example is
// silently dropped) after rooting /srv/workspace and /srv/state in ws and
// state.
func exampleRequest(t *testing.T, line, ws, state string) RunRequest {
	t.Helper()
	line = strings.ReplaceAll(line, `"/srv/workspace`, `"`+ws)
	line = strings.ReplaceAll(line, `"/srv/state`, `"`+state)
	var r struct {
		ProtocolVersion   int              `json:"protocol_version"`
		RequestID         string           `json:"request_id"`
		Command           string           `json:"command"`
		RunID             string           `json:"run_id"`
		SessionID         string           `json:"session_id"`
		Workspace         string           `json:"workspace"`
		SessionDir        string           `json:"session_dir"`
		Model             string           `json:"model"`
		Prompt            string           `json:"prompt"`
		Tools             []string         `json:"tools"`
		AllowFileMutation bool             `json:"allow_file_mutation"`
		Media             []protocol.Media `json:"media"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(line)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("example request: %v", err)
	}
	if r.ProtocolVersion != 1 || r.Command != "run" || r.RequestID == "" {
		t.Fatalf("example envelope %+v", r)
	}
	return RunRequest{RunID: r.RunID, SessionID: r.SessionID, Workspace: r.Workspace, SessionDir: r.SessionDir,
		Model: r.Model, Prompt: r.Prompt, Tools: r.Tools, AllowFileMutation: r.AllowFileMutation, Media: r.Media}
}

// exampleAgent is an agent whose catalog routes go to the fake instead of
// the provider's base URL, with the OpenAI key from its environment.
func exampleAgent(t *testing.T, fake *fakeprovider.Server, key string) (*Agent, *[]Route) {
	t.Helper()
	var routes []Route
	var a *Agent
	a, err := New(Options{Home: t.TempDir(),
		Getenv: func(k string) string {
			if k == "OPENAI_API_KEY" {
				return key
			}
			return ""
		},
		ProviderFactory: func(r Route) (Provider, error) {
			routes = append(routes, r)
			r.BaseURL = fake.BaseURL(fakeprovider.Mode(r.Mode))
			return a.defaultFactory(r)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return a, &routes
}

func runAll(t *testing.T, a *Agent, req RunRequest) ([]Event, protocol.FinalResult) {
	t.Helper()
	rc, err := a.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var evs []Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
	}
	return evs, rc.Wait()
}

// TestSourceExampleRun replays the source's run example: "model":"gpt-5.6"
// resolves in the built-in catalog (the family default, see the catalog)
// and runs on the Responses wire with the OpenAI key, offering only read.
func TestSourceExampleRun(t *testing.T) {
	const key = "sk-example-openai-key"
	fake, err := fakeprovider.New(fakeprovider.Options{APIKey: key, Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{ID: "call-1", Name: "read", Arguments: `{"path":"MEMORY.md"}`}}},
		{Text: "MEMORY.md records the customer's plan."},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ws, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "MEMORY.md"), []byte("plan: gold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, routes := exampleAgent(t, fake, key)
	evs, res := runAll(t, a, exampleRequest(t, sourceExampleRun, ws, state))
	if res.Status != "completed" || res.Output != "MEMORY.md records the customer's plan." || res.ToolCalls != 1 {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	acc := find[protocol.Accepted](evs)[0]
	if acc.Model.ID != "gpt-5.6" || acc.Model.Provider != "openai" || acc.Model.ProviderMode != "openai-responses" ||
		!slices.Equal(acc.Tools, []string{"read"}) || acc.EffectiveToolPolicy.AllowWrite.Value {
		t.Errorf("accepted %+v", acc)
	}
	if want := filepath.Join(state, "octet-sessions", "customer-42.jsonl"); acc.SessionFile != want {
		t.Errorf("session file %q, want %q", acc.SessionFile, want)
	}
	if r := (*routes)[0]; r.BaseURL != "https://api.openai.com/v1" || r.APIModel != "gpt-5.6" {
		t.Errorf("catalog route %+v", r)
	}
	fin := find[protocol.ToolFinish](evs)
	if len(fin) != 1 || !fin[0].OK || !strings.Contains(fin[0].Output, "plan: gold") {
		t.Errorf("tool_finish %+v", fin)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d provider requests", len(reqs))
	}
	for _, r := range reqs {
		if r.Path != "/v1/responses" || r.Model() != "gpt-5.6" || r.KeySHA256 != fakeprovider.KeyFingerprint(key) {
			t.Errorf("provider request %s model %q key %q", r.Path, r.Model(), r.KeySHA256)
		}
		tools, _ := json.Marshal(r.Body["tools"])
		if !strings.Contains(string(tools), `"read"`) || strings.Contains(string(tools), `"write"`) {
			t.Errorf("tools offered: %s", tools)
		}
	}
}

// TestSourceExampleMedia replays the source's media example. GPT-Audio-1.5
// takes text and audio but not images (OpenAI's model page), so the request
// as written is refused with media_unsupported before any provider call,
// with a message that names the first image and what the model takes. The
// same request with only its audio runs on that catalog route.
func TestSourceExampleMedia(t *testing.T) {
	const key = "sk-example-openai-key"
	fake, err := fakeprovider.New(fakeprovider.Options{APIKey: key, Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "A slow theme in D minor."}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ws := t.TempDir()
	files := map[string][]byte{
		"moodboard/one.png": []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR one"),
		"music/theme.wav":   []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00 theme"),
		"moodboard/two.jpg": []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00 two"),
	}
	for p, b := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := exampleAgent(t, fake, key)
	req := exampleRequest(t, sourceExampleMedia, ws, t.TempDir())
	req.SessionDir = filepath.Join(t.TempDir(), "sessions") // the example leaves it to the default under HOME

	// Refused in validation: no RunControl, nothing accepted (the host
	// writes only a final_result with this error).
	_, err = a.Run(context.Background(), req)
	var re *RunError
	if !errors.As(err, &re) || re.Code != protocol.CodeMediaUnsupported {
		t.Fatalf("Run = %v, want %s", err, protocol.CodeMediaUnsupported)
	}
	if msg := re.Message; !strings.Contains(msg, "media[0] is an image") || !strings.Contains(msg, `"gpt-audio-1.5" takes text, audio`) {
		t.Errorf("message %q", msg)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("a refused run reached the provider (%d requests)", n)
	}

	req.Media = []protocol.Media{req.Media[1]}
	req.RunID = "run-media-audio"
	_, res := runAll(t, a, req)
	if res.Status != "completed" || res.Output != "A slow theme in D minor." {
		t.Fatalf("audio only: %+v %+v", res, res.Error)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Model() != "gpt-audio-1.5" {
		t.Fatalf("provider requests %+v", reqs)
	}
	body, _ := json.Marshal(reqs[0].Body["messages"])
	if !strings.Contains(string(body), `"input_audio"`) || !strings.Contains(string(body), `"format":"wav"`) || strings.Contains(string(body), "image_url") {
		t.Errorf("messages %s", body)
	}
}
