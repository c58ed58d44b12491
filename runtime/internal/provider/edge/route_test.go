package edge

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRouteRejects(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{BaseURL: ""}, "test: base URL scheme must be http or https"},
		{Config{BaseURL: "://x"}, "test: base URL does not parse"},
		{Config{BaseURL: "ftp://host/v1"}, "test: base URL scheme must be http or https"},
		{Config{BaseURL: "http:///v1"}, "test: base URL has no host"},
		{Config{BaseURL: "https://user:pw@host/v1"}, "test: base URL must not have userinfo, query or fragment"},
		{Config{BaseURL: "https://host/v1?x=1"}, "test: base URL must not have userinfo, query or fragment"},
		{Config{BaseURL: "https://host/v1?"}, "test: base URL must not have userinfo, query or fragment"},
		{Config{BaseURL: "https://host/v1#frag"}, "test: base URL must not have userinfo, query or fragment"},
		{Config{BaseURL: "https://host", APIKey: "sk-secret\r\nX: y"}, "test: API key contains control characters"},
		{Config{BaseURL: "https://host", Headers: map[string]string{"Bad Name": "v"}}, `test: header name "Bad Name" is not a valid token`},
		{Config{BaseURL: "https://host", Headers: map[string]string{"": "v"}}, `test: header name "" is not a valid token`},
		{Config{BaseURL: "https://host", Headers: map[string]string{"X-Ok": "a\nb"}}, `test: header "X-Ok" value contains control characters`},
		{Config{BaseURL: "https://host", Headers: map[string]string{"X-Ok": "a\x7f"}}, `test: header "X-Ok" value contains control characters`},
		{Config{BaseURL: "https://host", IdleTimeout: -1}, "test: negative idle timeout"},
		{Config{BaseURL: "https://host", MaxEventBytes: -1}, "test: negative max event bytes"},
	}
	for _, tc := range tests {
		r, errs := testMode.Route(tc.cfg)
		if len(errs) != 1 || errs[0].Error() != tc.want {
			t.Errorf("Route(%+v) = %v, want [%s]", tc.cfg, errs, tc.want)
		}
		if r.Client != nil || r.Header != nil {
			t.Errorf("Route(%+v) filled a route despite errors", tc.cfg)
		}
		if tc.cfg.APIKey != "" && strings.Contains(errors.Join(errs...).Error(), tc.cfg.APIKey) {
			t.Errorf("an error contains the key: %v", errs)
		}
	}
	// Every problem is reported, in a fixed order.
	_, errs := testMode.Route(Config{BaseURL: "ftp://h", APIKey: "\n", IdleTimeout: -1, MaxEventBytes: -1})
	want := "test: base URL scheme must be http or https\ntest: API key contains control characters\n" +
		"test: negative idle timeout\ntest: negative max event bytes"
	if got := errors.Join(errs...).Error(); got != want {
		t.Errorf("all problems:\n got %q\nwant %q", got, want)
	}
}

func TestRouteDefaultsAndHeaders(t *testing.T) {
	m := &Mode{
		Name:        "anthropic-like",
		Endpoint:    func(base string) string { return base + "/v1/messages" },
		KeyHeader:   "X-Api-Key",
		BaseHeaders: map[string]string{"anthropic-version": "2023-06-01", "X-Base": "base"},
	}
	r, errs := m.Route(Config{
		BaseURL: "https://api.example.com",
		APIKey:  "sk-ant-0123456789",
		Headers: map[string]string{
			"X-Base":       "custom wins over base",
			"content-type": "text/plain", // the fixed headers win over custom ones
			"x-api-key":    "custom-key-loses",
			"Tab-Ok":       "a\tb",
		},
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if r.URL != "https://api.example.com/v1/messages" || r.Idle != DefaultIdleTimeout ||
		r.MaxEvent != DefaultMaxEventBytes || r.Now == nil || r.Client == nil {
		t.Errorf("defaults not filled: %+v", r)
	}
	if tr, ok := r.Client.Transport.(*http.Transport); !ok || tr == http.DefaultTransport {
		t.Errorf("client transport %T is not a private clone", r.Client.Transport)
	}
	want := http.Header{
		"Anthropic-Version": {"2023-06-01"},
		"X-Base":            {"custom wins over base"},
		"Content-Type":      {"application/json"},
		"Accept":            {"text/event-stream"},
		"X-Api-Key":         {"sk-ant-0123456789"},
		"Tab-Ok":            {"a\tb"},
	}
	if len(r.Header) != len(want) {
		t.Errorf("header %v, want %v", r.Header, want)
	}
	for k, v := range want {
		if got := r.Header[k]; len(got) != 1 || got[0] != v[0] {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	// The scrubber knows the key and the long custom values.
	if got := r.Scrub.Sanitize("sk-ant-0123456789 custom-key-loses"); got != "[redacted] [redacted]" {
		t.Errorf("route scrubber: %q", got)
	}
}

func TestRouteKeepsSettings(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	now := func() time.Time { return time.Unix(0, 0) }
	r, errs := testMode.Route(Config{BaseURL: "http://h/v1/", HTTPClient: client, IdleTimeout: time.Second, MaxEventBytes: 10, Now: now})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	// The client is the caller's, copied so that it never follows a
	// redirect (nofollow).
	if r.Client.Transport != client.Transport || r.Client.Timeout != time.Minute || r.Client.CheckRedirect == nil || r.Idle != time.Second || r.MaxEvent != 10 || !r.Now().Equal(time.Unix(0, 0)) {
		t.Errorf("settings not kept: %+v", r)
	}
	if r.URL != "http://h/v1/stream" {
		t.Errorf("URL %q", r.URL)
	}
	if _, ok := r.Header["Authorization"]; ok {
		t.Error("a key header without a key")
	}
}
