package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/copilot/copilottest"
)

const (
	copilotGH      = "gho_CANARYruntimeTOKEN0042"
	copilotSession = "tid=CANARYruntimeSESSION;mac0042"
)

const copilotInventory = `{"data":[
 {"id":"gpt-4o","name":"GPT-4o","supported_endpoints":["/chat/completions"],"capabilities":{"type":"chat","limits":{"max_context_window_tokens":128000,"max_output_tokens":4096},"supports":{"tool_calls":true}}},
 {"id":"gpt-5","name":"GPT-5","supported_endpoints":["/responses"],"capabilities":{"type":"chat","limits":{"max_context_window_tokens":200000,"max_output_tokens":64000},"supports":{"tool_calls":true}}},
 {"id":"claude-only","supported_endpoints":["/v1/messages"],"capabilities":{"type":"chat"}}]}`

const copilotChatSSE = "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hello from copilot\"}}]}\n\n" +
	"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":3,\"total_tokens\":6}}\n\n" +
	"data: [DONE]\n\n"

// copilotAgent is an Agent whose home holds a Copilot login and identity,
// with the loopback stand-ins of GitHub behind its HTTP client.
func copilotAgent(t *testing.T, chat func(n int64, rw http.ResponseWriter)) (*Agent, string, *copilottest.World, *atomic.Int64) {
	t.Helper()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".octet"), 0o700)
	os.WriteFile(filepath.Join(home, ".octet", "settings.json"), []byte(`{"copilot":{"editor_version":"octet-test/1","integration_id":"octet-test"}}`), 0o600)
	if err := (&copilot.FileHost{Home: home}).SaveCredential(context.Background(), copilot.Credential{Token: copilot.NewSecret(copilotGH), ID: copilot.NewLoginID()}); err != nil {
		t.Fatal(err)
	}
	w := copilottest.NewWorld(t)
	var ex, n atomic.Int64
	w.Handle("api.github.com", "/copilot_internal/v2/token", func(rw http.ResponseWriter, r *http.Request) {
		ex.Add(1)
		fmt.Fprintf(rw, `{"token":"%s%d","expires_at":1999999999,"refresh_in":1500,"endpoints":{"api":"https://api.business.githubcopilot.com"}}`, copilotSession, ex.Load())
	})
	w.Handle("api.business.githubcopilot.com", "/models", func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, copilotInventory) })
	w.Handle("api.business.githubcopilot.com", "/chat/completions", func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Editor-Version") != "octet-test/1" || !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "+copilotSession) || r.Header.Get("X-Initiator") != "user" {
			rw.WriteHeader(400)
			io.WriteString(rw, `{"error":{"message":"missing Editor-Version header for IDE auth"}}`)
			return
		}
		rw.Header().Set("Content-Type", "text/event-stream")
		chat(n.Add(1), rw)
	})
	a, err := New(Options{Home: home, HTTPClient: w.Client, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return a, home, w, &ex
}

func TestCopilotModelsJoinOnlineCatalog(t *testing.T) {
	a, _, w, _ := copilotAgent(t, func(int64, http.ResponseWriter) {})
	off, _, err := a.Models(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range off {
		if m.Provider == "copilot" {
			t.Fatal("offline listed a Copilot model")
		}
	}
	if w.Hits("api.github.com") != 0 {
		t.Fatal("offline touched the network")
	}
	on, issues, err := a.Models(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range on {
		if m.Provider == "copilot" {
			got[m.ID] = m.ProviderMode
		}
	}
	if got["copilot/gpt-4o"] != "openai-compatible" || got["copilot/gpt-5"] != "openai-responses" || len(got) != 2 {
		t.Fatalf("copilot models %v (issues %v)", got, issues)
	}
	for _, is := range issues {
		if is.Provider == "copilot" {
			t.Fatalf("issue %v", is)
		}
	}
}

func TestCopilotRun(t *testing.T) {
	a, home, _, ex := copilotAgent(t, func(_ int64, rw http.ResponseWriter) { io.WriteString(rw, copilotChatSSE) })
	for _, model := range []string{"copilot/gpt-4o", "github-copilot/gpt-4o"} {
		rc, err := a.Run(context.Background(), RunRequest{RunID: "r", Workspace: t.TempDir(), Model: model, Prompt: "hi", SessionDir: filepath.Join(home, "s")})
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		for range rc.Events() {
		}
		if res := rc.Wait(); res.Status != "completed" || res.Output != "hello from copilot" {
			t.Fatalf("%s: %+v %+v", model, res, res.Error)
		}
	}
	if ex.Load() != 1 {
		t.Fatalf("%d exchanges for two runs", ex.Load())
	}
	grepCopilotSecrets(t, home)
}

func TestCopilotRun401Twice(t *testing.T) {
	a, home, _, ex := copilotAgent(t, func(_ int64, rw http.ResponseWriter) {
		rw.WriteHeader(401)
		io.WriteString(rw, `{"error":{"message":"unauthorized: token expired"}}`)
	})
	rc, err := a.Run(context.Background(), RunRequest{RunID: "r", Workspace: t.TempDir(), Model: "copilot/gpt-4o", Prompt: "hi", SessionDir: filepath.Join(home, "s")})
	if err != nil {
		t.Fatal(err)
	}
	for range rc.Events() {
	}
	res := rc.Wait()
	if res.Status == "completed" || res.Error == nil || res.Error.Code != protocol.CodeAuthFailed {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	if ex.Load() != 2 {
		t.Fatalf("%d exchanges, want the first and one re-exchange", ex.Load())
	}
	grepCopilotSecrets(t, home)
}

func TestCopilotRunWithoutLogin(t *testing.T) {
	a, home, w, _ := copilotAgent(t, func(int64, http.ResponseWriter) {})
	os.Remove(filepath.Join(home, ".octet", "credentials", "copilot.json"))
	_, err := a.Run(context.Background(), RunRequest{RunID: "r", Workspace: t.TempDir(), Model: "copilot/gpt-4o", Prompt: "hi", SessionDir: filepath.Join(home, "s")})
	if !isCode(err, protocol.CodeCredentialsMissing) {
		t.Fatalf("got %v", err)
	}
	if w.Hits("api.github.com") != 0 {
		t.Fatal("a request without a login")
	}
}

// grepCopilotSecrets fails when a secret reached any file under home but
// the credential store itself.
func grepCopilotSecrets(t *testing.T, home string) {
	t.Helper()
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, filepath.Join("credentials", "copilot.json")) {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, s := range []string{copilotGH, copilotSession} {
			if strings.Contains(string(data), s) {
				t.Errorf("%s holds a secret", p)
			}
		}
		return nil
	})
}
