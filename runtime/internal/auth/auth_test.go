package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/codex"
	"octet.dev/host/runtime/provider"
)

func TestOutputCap(t *testing.T) {
	for _, c := range []struct {
		m    catalog.Model
		want int
	}{
		{catalog.Model{ID: "codex/gpt-5", BaseURL: codex.ChatGPTBaseURL + "/", MaxOutputTokens: 100}, 0},
		{catalog.Model{ID: "codex/gpt-5", BaseURL: codex.APIBaseURL, MaxOutputTokens: 100}, 100},
		{catalog.Model{ID: "openai/gpt-5", BaseURL: codex.ChatGPTBaseURL, MaxOutputTokens: 100}, 100},
	} {
		if got := OutputCap(c.m); got != c.want {
			t.Errorf("OutputCap(%s at %s) = %d, want %d", c.m.ID, c.m.BaseURL, got, c.want)
		}
	}
}

func TestCodexUnauthorized(t *testing.T) {
	route := catalog.Model{ID: "codex/gpt-5", Provider: "codex"}
	e401 := fmt.Errorf("stream: %w", &provider.Error{Kind: provider.FailHTTPStatus, Status: http.StatusUnauthorized})
	e403 := &provider.Error{Kind: provider.FailHTTPStatus, Status: http.StatusForbidden}
	if !CodexUnauthorized(route, e401) {
		t.Error("a wrapped 401 on a Codex route is not recognized")
	}
	if CodexUnauthorized(route, e403) || CodexUnauthorized(route, errors.New("x")) {
		t.Error("a 403 or a plain error is taken for a 401")
	}
	inline := route
	inline.Inline = true
	if CodexUnauthorized(inline, e401) || CodexUnauthorized(catalog.Model{ID: "openai/gpt-5", Provider: "openai"}, e401) {
		t.Error("an inline or non-Codex route's 401 is taken for the host's credential")
	}
}

func TestRoutesWithoutLogin(t *testing.T) {
	env := Env{Home: t.TempDir()}
	if CodexAvailable(env.Home) {
		t.Fatal("an empty home has a Codex credential")
	}
	if _, _, _, r := CodexRoute(context.Background(), env, "gpt-5"); r == nil || r.Code != protocol.CodeCredentialsMissing {
		t.Fatalf("CodexRoute without a login: %v", r)
	}
	if _, _, _, r := CodexRoute(context.Background(), env, ""); r == nil || r.Code != protocol.CodeModelNotFound {
		t.Fatalf("CodexRoute without a model: %v", r)
	}
	var c Copilot
	if c.Enabled(env) {
		t.Fatal("the file host is enabled without a stored login")
	}
	if _, _, r := c.Route(context.Background(), env, "gpt-4o"); r == nil || r.Code != protocol.CodeCredentialsMissing {
		t.Fatalf("Copilot route without a login: %v", r)
	}
}

func TestCopilotName(t *testing.T) {
	for in, want := range map[string]string{"copilot/gpt-4o": "gpt-4o", "github-copilot/o3": "o3"} {
		if got, ok := CopilotName(in); !ok || got != want {
			t.Errorf("CopilotName(%q) = %q, %v", in, got, ok)
		}
	}
	if _, ok := CopilotName("openai/gpt-4o"); ok {
		t.Error("openai/gpt-4o is taken for a Copilot route")
	}
}
