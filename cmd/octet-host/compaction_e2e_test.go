package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"octet.dev/host/runtime/fakeprovider"
)

// TestKillAfterCheckpointThenResume: the host is killed (SIGKILL) right
// after a threshold compaction wrote its checkpoint, before the step that
// follows it has an answer. A new host resumes the session from the
// checkpoint: its first request holds the wrapped summary, then the kept
// messages.
func TestKillAfterCheckpointThenResume(t *testing.T) {
	first := strings.Repeat("first prompt words ", 632)
	second := strings.Repeat("second prompt words ", 600)
	fake := fakeFor(t, fakeprovider.Script{
		Summaries: []fakeprovider.Turn{{Text: "## Goal\nthe first task"}},
		Turns: []fakeprovider.Turn{
			{Text: "noted", Usage: fakeprovider.Usage{Input: 3100, Output: 5}},
			{ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "ls", Arguments: `{}`}}, Usage: fakeprovider.Usage{Input: 7600, Output: 10}},
			{Text: "answer one", Usage: fakeprovider.Usage{Input: 3000, Output: 5}},
			{Text: "answer two", Usage: fakeprovider.Usage{Input: 3000, Output: 5}},
		}})
	ws, sessions := t.TempDir(), filepath.Join(t.TempDir(), "sessions")
	line := func(id, prompt string) string {
		return fmt.Sprintf(`{"protocol_version":1,"request_id":%q,"command":"run","run_id":%q,"workspace":%q,"model":"m","prompt":%q,"provider":"fake","base_url":%q,"context_window_tokens":10000,"max_output_tokens":1000,"tools":["ls"],"session_id":"kill-9","session_dir":%q}`,
			id, id, ws, prompt, fake.BaseURL(fakeprovider.ModeChat), sessions)
	}
	until := func(p *proc, typ string) event {
		t.Helper()
		for {
			ev := p.next(t)
			if ev.Type == typ {
				return ev
			}
			if ev.Type == "final_result" || ev.Type == "protocol_error" {
				t.Fatalf("waiting for %s: %s %s", typ, ev.Type, ev.Data)
			}
		}
	}

	p := start(t, hostBin)
	p.send(t, line("run-1", first))
	until(p, "final_result")
	p.send(t, line("run-2", second))
	fin := until(p, "compaction_finish")
	var f struct {
		OK bool `json:"ok"`
	}
	json.Unmarshal(fin.Data, &f)
	if !f.OK {
		t.Fatalf("compaction_finish %s", fin.Data)
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	p.cmd.Wait()
	before := len(fake.Requests())

	q := start(t, hostBin)
	q.send(t, line("run-3", "and now?"))
	res := until(q, "final_result")
	var fr struct {
		Status string `json:"status"`
	}
	json.Unmarshal(res.Data, &fr)
	if fr.Status != "completed" {
		t.Fatalf("resumed run: %s", res.Data)
	}
	// The killed host's last request may reach the fake after before was
	// taken, cut short by the kill (no body that parses): the resumed
	// run's first request is the first whose last message is its prompt.
	var msgs []any
	for _, r := range fake.Requests()[before:] {
		m, _ := r.Body["messages"].([]any)
		if len(m) == 0 {
			continue
		}
		if last, _ := m[len(m)-1].(map[string]any); last["content"] == "and now?" {
			msgs = m
			break
		}
	}
	if msgs == nil {
		t.Fatal("the resumed run sent no request with its prompt")
	}
	text := func(i int) string {
		m, _ := msgs[i].(map[string]any)
		s, _ := m["content"].(string)
		return s
	}
	if len(msgs) < 4 || !strings.HasPrefix(text(1), "The conversation history before this point was compacted") ||
		!strings.Contains(text(1), "## Goal\nthe first task") || text(2) != second {
		t.Fatalf("the resumed request does not start from the checkpoint: %d messages", len(msgs))
	}
	for _, m := range msgs {
		if s, _ := m.(map[string]any)["content"].(string); strings.Contains(s, "first prompt words") {
			t.Fatal("the resumed request holds compacted history")
		}
	}
}
