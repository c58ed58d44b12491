package fakeprovider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// filesOnDisk lists the fixture names of mode from the source tree, the
// way Fixtures should.
func filesOnDisk(t *testing.T, mode Mode) []string {
	t.Helper()
	dir := filepath.Join("fixtures", mode.fixtureDir())
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		for _, suf := range []string{".sse", ".chunks.jsonl"} {
			if strings.HasSuffix(rel, suf) {
				names = append(names, strings.TrimSuffix(rel, suf))
			}
		}
		if strings.HasPrefix(rel, "errors/") && strings.HasSuffix(rel, ".json") {
			names = append(names, strings.TrimSuffix(rel, ".json"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return names
}

func TestFixturesList(t *testing.T) {
	for _, mode := range Modes() {
		names := Fixtures(mode)
		if diff := cmp.Diff(filesOnDisk(t, mode), names); diff != "" {
			t.Errorf("Fixtures(%s) (-disk +listed):\n%s", mode, diff)
		}
		if len(names) < 5 {
			t.Errorf("Fixtures(%s) lists only %d", mode, len(names))
		}
	}
	if Fixtures("nope") != nil {
		t.Error("Fixtures of an unknown mode")
	}
	// The license notes travel with the data.
	for _, f := range []string{"LICENSES.md", "LICENSE-APACHE-2.0.txt", "LICENSE-MIT.txt", "SOURCES.md",
		"openai-chat/SOURCES.md", "openai-responses/SOURCES.md", "anthropic/SOURCES.md"} {
		if _, err := fixtureFS.ReadFile("fixtures/" + f); err != nil {
			t.Errorf("embedded %s: %v", f, err)
		}
	}
}

// TestReplaySSE replays every recorded .sse fixture and compares the body
// with the file byte for byte, and the status and headers with the
// recording.
func TestReplaySSE(t *testing.T) {
	s := newServer(t, Script{})
	c := newClient(t)
	count := 0
	for _, mode := range Modes() {
		for _, name := range Fixtures(mode) {
			file := filepath.Join("fixtures", mode.fixtureDir(), name+".sse")
			want, err := os.ReadFile(file)
			if err != nil {
				continue // not an .sse fixture
			}
			count++
			if err := s.ServeFixture(mode, name); err != nil {
				t.Fatal(err)
			}
			resp := send(t, c, s, mode, requestBody(mode, "m"))
			got := readAll(t, resp)
			if !bytes.Equal(got, want) {
				t.Errorf("%s/%s: body differs from the file (%d vs %d bytes)", mode, name, len(got), len(want))
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Errorf("%s/%s: Content-Type %q", mode, name, resp.Header.Get("Content-Type"))
			}
			hf, err := os.ReadFile(strings.TrimSuffix(file, ".sse") + ".headers.json")
			if err != nil {
				continue
			}
			var rec struct {
				Status  int                 `json:"status"`
				Headers map[string][]string `json:"headers"`
			}
			if err := json.Unmarshal(hf, &rec); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != rec.Status {
				t.Errorf("%s/%s: status %d, recorded %d", mode, name, resp.StatusCode, rec.Status)
			}
			for k, v := range rec.Headers {
				if hopHeaders[strings.ToLower(k)] {
					continue
				}
				if diff := cmp.Diff(v, resp.Header.Values(k)); diff != "" {
					t.Errorf("%s/%s: header %s (-recorded +served):\n%s", mode, name, k, diff)
				}
			}
		}
	}
	if count < 15 {
		t.Errorf("replayed only %d .sse fixtures", count)
	}
	for i, r := range s.Requests() {
		if r.Fixture == "" || r.Turn != -1 {
			t.Errorf("request %d: Fixture %q Turn %d", i, r.Fixture, r.Turn)
		}
	}
}

// TestReplayChunks checks the framing of .chunks.jsonl fixtures: one event
// per line, event: <type> on Responses and Anthropic, [DONE] on chat.
func TestReplayChunks(t *testing.T) {
	s := newServer(t, Script{})
	c := newClient(t)
	for _, mode := range Modes() {
		for _, name := range Fixtures(mode) {
			raw, err := os.ReadFile(filepath.Join("fixtures", mode.fixtureDir(), name+".chunks.jsonl"))
			if err != nil {
				continue
			}
			var lines []string
			for _, l := range strings.Split(string(raw), "\n") {
				if strings.TrimSpace(l) != "" {
					lines = append(lines, l)
				}
			}
			if err := s.ServeFixture(mode, name+".chunks.jsonl"); err != nil {
				t.Fatal(err)
			}
			body := readAll(t, send(t, c, s, mode, requestBody(mode, "m")))
			evs := parseSSE(t, body)
			if mode == ModeChat {
				if len(evs) != len(lines)+1 || evs[len(evs)-1].Data != "[DONE]" {
					t.Errorf("%s/%s: %d events for %d lines, last %q", mode, name, len(evs), len(lines), evs[len(evs)-1].Data)
					continue
				}
			} else if len(evs) != len(lines) {
				t.Errorf("%s/%s: %d events for %d lines", mode, name, len(evs), len(lines))
				continue
			}
			for i, l := range lines {
				if evs[i].Data != l {
					t.Errorf("%s/%s: event %d data is not line %d byte for byte", mode, name, i, i)
				}
				if mode != ModeChat && evs[i].Event != str(decode(t, evs[i])["type"]) {
					t.Errorf("%s/%s: event %d named %q", mode, name, i, evs[i].Event)
				}
			}
		}
	}
}

func TestReplayErrorFixture(t *testing.T) {
	s := newServer(t, Script{})
	c := newClient(t)
	want, err := os.ReadFile("fixtures/openai-responses/errors/vercel_429-insufficient-quota.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ServeFixture(ModeResponses, "errors/vercel_429-insufficient-quota"); err != nil {
		t.Fatal(err)
	}
	resp := send(t, c, s, ModeResponses, requestBody(ModeResponses, "m"))
	if got := readAll(t, resp); resp.StatusCode != 429 || !bytes.Equal(got, want) || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("error fixture: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
}

// TestFixtureQueueAndSticky checks the order of precedence: queued fixture,
// then the SetFixture one, then the script; and that a cut fixture stays
// queued for the retry.
func TestFixtureQueueAndSticky(t *testing.T) {
	s := newServer(t, Script{Turns: []Turn{{Text: "scripted"}}})
	c := newClient(t)
	text, err := os.ReadFile("fixtures/anthropic/llm-anthropic_text.sse")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ServeFixture(ModeAnthropic, "llm-anthropic_text"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFixture(ModeAnthropic, "anthropic-sdk-go_final-text-after-tool.sse"); err != nil {
		t.Fatal(err)
	}
	s.InjectFault(FaultCutMidStream{AfterEvents: 2, Graceful: true})

	cutBody := readAll(t, send(t, c, s, ModeAnthropic, requestBody(ModeAnthropic, "m")))
	if !bytes.HasPrefix(text, cutBody) || len(parseSSE(t, cutBody)) != 2 {
		t.Errorf("cut fixture: %q", cutBody)
	}
	if got := readAll(t, send(t, c, s, ModeAnthropic, requestBody(ModeAnthropic, "m"))); !bytes.Equal(got, text) {
		t.Error("the retry did not get the queued fixture whole")
	}
	sticky, _ := FixtureBody(ModeAnthropic, "anthropic-sdk-go_final-text-after-tool")
	for range 2 {
		if got := readAll(t, send(t, c, s, ModeAnthropic, requestBody(ModeAnthropic, "m"))); !bytes.Equal(got, sticky) {
			t.Error("SetFixture answer differs")
		}
	}
	// Other modes still use the script.
	expectTurn(t, c, s, ModeChat, "scripted")
	if err := s.SetFixture(ModeAnthropic, ""); err != nil {
		t.Fatal(err)
	}
	resp := send(t, c, s, ModeAnthropic, requestBody(ModeAnthropic, "m"))
	if readAll(t, resp); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("after clearing SetFixture: %d", resp.StatusCode)
	}

	for _, bad := range [][2]string{{"anthropic-messages", "nope"}, {"openai-compatible", "llm-anthropic_text"}, {"x", "y"}} {
		if err := s.ServeFixture(Mode(bad[0]), bad[1]); err == nil {
			t.Errorf("ServeFixture(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{
		"openai-compatible": ModeChat, "openai-chat": ModeChat,
		"openai-responses": ModeResponses, "anthropic-messages": ModeAnthropic, "anthropic": ModeAnthropic,
	} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("chat"); err == nil {
		t.Error(`ParseMode("chat") accepted`)
	}
}
