package fakeprovider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// TestCodexBackendRejectsOutputCap: the Codex backend path speaks the
// Responses wire but, like chatgpt.com/backend-api/codex, answers a
// top-level max_output_tokens with its 400 and consumes no turn; the
// platform endpoint takes the same body.
func TestCodexBackendRejectsOutputCap(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{{Text: "platform"}, {Text: "backend"}}})
	c := newClient(t)
	post := func(url string, body map[string]any) (*http.Response, []byte) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer test-key")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		return resp, readAll(t, resp)
	}
	capped := requestBody(ModeResponses, "m")
	capped["max_output_tokens"] = 1024

	resp, body := post(s.CodexBaseURL()+"/responses", capped)
	if resp.StatusCode != http.StatusBadRequest || string(body) != `{"detail":"Unsupported parameter: max_output_tokens"}` {
		t.Errorf("backend with max_output_tokens: %d %s", resp.StatusCode, body)
	}
	if s.TurnsLeft() != 2 {
		t.Errorf("the refused request consumed a turn: %d left", s.TurnsLeft())
	}
	resp, body = post(s.BaseURL(ModeResponses)+"/responses", capped)
	if got := summarize(t, ModeResponses, body); resp.StatusCode != http.StatusOK || got.Text != "platform" {
		t.Errorf("platform with max_output_tokens: %d %+v", resp.StatusCode, got)
	}
	resp, body = post(s.CodexBaseURL()+"/responses", requestBody(ModeResponses, "m"))
	if got := summarize(t, ModeResponses, body); resp.StatusCode != http.StatusOK || got.Text != "backend" {
		t.Errorf("backend without max_output_tokens: %d %+v", resp.StatusCode, got)
	}
	reqs := s.Requests()
	if len(reqs) != 3 || reqs[0].Mode != ModeResponses || reqs[0].Path != "/backend-api/codex/responses" || reqs[1].Path != "/v1/responses" {
		t.Errorf("requests %+v", reqs)
	}
}
