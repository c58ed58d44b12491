package engine

import (
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/prepare"
)

func TestPromptCacheKey(t *testing.T) {
	m := catalog.Model{ID: "gpt-x", Provider: "openai"}
	k := promptCacheKey("customer-42", m)
	if k != promptCacheKey("customer-42", m) {
		t.Fatal("the key is not stable")
	}
	if len(k) > 64 || !strings.HasPrefix(k, "octet-") || strings.Contains(k, "customer-42") {
		t.Errorf("key %q: at most 64 bytes (the Responses limit), no session id in clear", k)
	}
	other := m
	other.ID = "gpt-y"
	for _, o := range []string{promptCacheKey("customer-43", m), promptCacheKey("customer-42", other)} {
		if o == k {
			t.Errorf("another session or route has the same key %q", k)
		}
	}
}

// Only OpenAI's own Chat Completions endpoint gets prompt_cache_key.
func TestAcceptsPromptCacheKey(t *testing.T) {
	var builtinChat *catalog.Model
	for _, m := range catalog.Builtin() {
		if m.Provider == catalog.ProviderOpenAI && m.Mode == catalog.ModeOpenAICompatible {
			builtinChat = &m
			break
		}
	}
	if builtinChat == nil {
		t.Fatal("no built-in OpenAI chat model")
	}
	if !prepare.AcceptsPromptCacheKey(*builtinChat) || !prepare.RouteFor(*builtinChat, "k", nil).AcceptsPromptCacheKey {
		t.Errorf("%s: not accepted", builtinChat.ID)
	}
	inline, err := catalog.InlineRoute(catalog.InlineSpec{Provider: "openai", BaseURL: catalog.OpenAIBaseURL, Model: "gpt-x"})
	if err != nil {
		t.Fatal(err)
	}
	configured := *builtinChat
	configured.Provider = "gateway"
	for _, m := range []catalog.Model{inline, configured} {
		if prepare.AcceptsPromptCacheKey(m) {
			t.Errorf("%+v accepted", m)
		}
	}
}

// Every model call of a session carries the same key, across runs.
func TestRequestsCarryTheSessionCacheKey(t *testing.T) {
	f := newFixture(t, text("one"), text("two"))
	for _, id := range []string{"run-1", "run-2"} {
		req := f.req("hi")
		req.RunID, req.SessionID = id, "keyed"
		if _, res := f.run(req); res.Status != "completed" {
			t.Fatalf("%+v", res)
		}
	}
	reqs := f.prov.requests()
	if len(reqs) != 2 || reqs[0].CacheKey == "" || reqs[0].CacheKey != reqs[1].CacheKey {
		t.Fatalf("keys %q", []string{reqs[0].CacheKey, reqs[len(reqs)-1].CacheKey})
	}
	if f.lastRoute.AcceptsPromptCacheKey {
		t.Error("an inline route accepts prompt_cache_key")
	}
}
