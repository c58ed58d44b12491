package fakeprovider

import (
	"net/http"
	"testing"
)

// TestLoadingPhase: the first Script.Loading model requests, in any mode,
// get llama.cpp's 503 "Loading model" answer byte for byte, before the
// key check and the faults; they consume no turn and no fault, and then
// the server answers normally. GET /v1/models is not part of the phase.
func TestLoadingPhase(t *testing.T) {
	sc := threeTurns
	sc.Loading = 3
	s, err := New(Options{Script: sc, APIKey: "test-key"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := newClient(t)
	s.InjectFault(FaultStatus{Code: 429})

	resp, err := c.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/models during the loading phase: %d", resp.StatusCode)
	}
	for i, mode := range Modes() {
		body := requestBody(mode, "m")
		if i == 0 {
			body = map[string]any{"not": "a model request"} // llama-server answers before it reads the body
		}
		resp := send(t, c, s, mode, body)
		got := readAll(t, resp)
		if resp.StatusCode != http.StatusServiceUnavailable || string(got) != LoadingBody ||
			resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %q %s", mode, resp.StatusCode, resp.Header.Get("Content-Type"), got)
		}
		if left := s.LoadingLeft(); left != 2-i {
			t.Errorf("after %d loading answers, %d left", i+1, left)
		}
	}
	if s.TurnsLeft() != 3 {
		t.Errorf("the loading phase consumed turns: %d left", s.TurnsLeft())
	}
	// The fault injected before the phase is still first in line.
	resp = send(t, c, s, ModeChat, requestBody(ModeChat, "m"))
	if readAll(t, resp); resp.StatusCode != 429 {
		t.Errorf("after the loading phase: %d, want the injected 429", resp.StatusCode)
	}
	expectTurn(t, c, s, ModeChat, threeTurns.Turns[0].Text)
	reqs := s.Requests()
	faults := []string{}
	for _, r := range reqs {
		faults = append(faults, r.Fault)
	}
	want := []string{"", "loading", "loading", "loading", "status(429)", ""}
	if len(faults) != len(want) {
		t.Fatalf("faults %q, want %q", faults, want)
	}
	for i := range want {
		if faults[i] != want[i] {
			t.Errorf("request %d fault %q, want %q", i, faults[i], want[i])
		}
	}
	// SetScript starts a new phase.
	s.SetScript(Script{Loading: 1, Turns: []Turn{{Text: "after"}}})
	if s.LoadingLeft() != 1 {
		t.Errorf("SetScript: %d loading answers, want 1", s.LoadingLeft())
	}
}

// TestLoadingBeforeKeyCheck: like llama-server, the loading answer comes
// before the API key is checked; afterwards a wrong key is refused.
func TestLoadingBeforeKeyCheck(t *testing.T) {
	s, err := New(Options{Script: Script{Loading: 1, Turns: []Turn{{Text: "x"}}}, APIKey: "another-key"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := newClient(t)
	for _, want := range []int{http.StatusServiceUnavailable, http.StatusUnauthorized} {
		resp := send(t, c, s, ModeChat, requestBody(ModeChat, "m"))
		if readAll(t, resp); resp.StatusCode != want {
			t.Errorf("status %d, want %d", resp.StatusCode, want)
		}
	}
}

// TestParseScriptLoading: a script file sets the phase with "loading".
func TestParseScriptLoading(t *testing.T) {
	sc, err := ParseScript([]byte(`{"loading": 2, "turns": [{"text": "ok"}]}`))
	if err != nil || sc.Loading != 2 {
		t.Fatalf("%+v, %v", sc, err)
	}
	if _, err := ParseScript([]byte(`{"loading": "2", "turns": []}`)); err == nil {
		t.Error("a string loading count was accepted")
	}
}
