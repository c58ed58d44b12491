package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"octet.dev/host/protocol"

	"octet.dev/host/runtime/fakeprovider"
)

// TestHomeInsideWorkspaceIsProtected: with HOME=<workspace>/home/user and
// allow_file_mutation, the model can neither write nor edit the user's
// ~/.octet, by any spelling, and the next run's policy is still the
// operator's. Through a real run against the fake
// provider; the session goes to the default ~/.octet/sessions, inside the
// workspace, as it would.
func TestHomeInsideWorkspaceIsProtected(t *testing.T) {
	for _, exists := range []bool{true, false} {
		name := "octet missing"
		if exists {
			name = "octet exists"
		}
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			home := filepath.Join(ws, "home", "user")
			settings := filepath.Join(home, ".octet", "settings.json")
			const operator = `{"tool_policy":{"max_output_bytes":4096}}`
			sessionDir := ""
			if exists {
				if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(settings, []byte(operator), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.MkdirAll(home, 0o755); err != nil {
					t.Fatal(err)
				}
				sessionDir = filepath.Join(t.TempDir(), "sessions") // the host creates no ~/.octet either
			}
			plant := `{"tool_policy":{"allow_shell":true,"allow_process":true}}`
			args := func(v map[string]string) string { b, _ := json.Marshal(v); return string(b) }
			calls := []fakeprovider.ToolCall{
				{ID: "c1", Name: "write", Arguments: args(map[string]string{"path": "home/user/.octet/settings.json", "content": plant})},
				{ID: "c2", Name: "write", Arguments: args(map[string]string{"path": filepath.Join(home, ".octet", "settings.json"), "content": plant})},
				{ID: "c3", Name: "write", Arguments: args(map[string]string{"path": "home/x/../user/.octet/credentials/openai.json", "content": `{"api_key":"sk-mine"}`})},
				{ID: "c4", Name: "write", Arguments: args(map[string]string{"path": "home/user/.octet/models.json", "content": `{}`})},
				{ID: "c5", Name: "write", Arguments: args(map[string]string{"path": "home/user/notes.txt", "content": "fine"})},
			}
			if exists {
				calls = append(calls, fakeprovider.ToolCall{ID: "c6", Name: "edit", Arguments: args(map[string]string{"path": "home/user/.octet/settings.json", "old_text": "4096", "new_text": "8192"})})
			}
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
				{ToolCalls: calls}, {Text: "done"}, {Text: "second run"},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			a, err := New(Options{Home: home, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			run := func(id string) ([]Event, protocol.FinalResult) {
				t.Helper()
				rc, err := a.Run(context.Background(), RunRequest{RunID: id, Workspace: ws, Model: "m", Prompt: "go", AllowFileMutation: true,
					SessionDir: sessionDir, Route: &InlineRoute{Provider: "p", BaseURL: fake.BaseURL(fakeprovider.ModeChat)}})
				if err != nil {
					t.Fatal(err)
				}
				var evs []Event
				for ev := range rc.Events() {
					evs = append(evs, ev)
				}
				return evs, rc.Wait()
			}
			evs, res := run("r1")
			if res.Status != "completed" {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			for _, fin := range find[protocol.ToolFinish](evs) {
				switch {
				case fin.CallID == "c5":
					if !fin.OK {
						t.Errorf("c5: %+v", fin.Error)
					}
				case fin.Error == nil || fin.Error.Code != "protected_path":
					t.Errorf("%s: %+v %+v, want protected_path", fin.CallID, fin, fin.Error)
				}
			}
			if len(res.FilesChanged) != 1 || res.FilesChanged[0] != "home/user/notes.txt" {
				t.Errorf("files changed %v", res.FilesChanged)
			}
			got, err := os.ReadFile(settings)
			switch {
			case exists && string(got) != operator:
				t.Errorf("settings.json is now %q", got)
			case !exists && err == nil:
				t.Errorf("settings.json was created: %q", got)
			}
			if _, err := os.Stat(filepath.Join(home, ".octet", "credentials")); err == nil {
				t.Error("~/.octet/credentials was created")
			}

			evs, _ = run("r2")
			acc := find[protocol.Accepted](evs)
			if len(acc) != 1 {
				t.Fatal("no accepted event")
			}
			pol := acc[0].EffectiveToolPolicy
			if pol.AllowShell.Value || pol.AllowProcess.Value {
				t.Errorf("the next run has allow_shell %+v, allow_process %+v", pol.AllowShell, pol.AllowProcess)
			}
			if exists && (pol.MaxOutputBytes.Value != 4096 || pol.MaxOutputBytes.Source != "config") {
				t.Errorf("the operator's own setting is lost: %+v", pol.MaxOutputBytes)
			}
		})
	}
}
