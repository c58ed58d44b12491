package discovery

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"octet.dev/host/protocol"
)

// TestRedirectIsRefused: an endpoint that redirects its model list
// elsewhere is an issue naming the status, never the Location, and the
// other server never gets the request or the key.
func TestRedirectIsRefused(t *testing.T) {
	var reached, withKey atomic.Int32
	other := serve(t, func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if r.Header.Get("Authorization") != "" {
			withKey.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"stolen"}]}`))
	})
	for _, status := range []int{301, 302, 303, 307, 308} {
		base := serve(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other+"/models?leak=loc-secret-value", status)
		})
		ms, is := discover(t, time.Second, Endpoint{Provider: "gw", BaseURL: base, APIKey: testKey})
		iss := oneIssue(t, ms, is, "gw", protocol.CodeDiscoveryFailed)
		if !strings.Contains(iss.Message, http.StatusText(status)) || !strings.Contains(iss.Message, "redirect refused") {
			t.Errorf("%d: %q", status, iss.Message)
		}
		if strings.Contains(iss.Message, "loc-secret") || strings.Contains(iss.Message, strings.TrimSuffix(other, "/v1")) {
			t.Errorf("%d: the message names the Location: %q", status, iss.Message)
		}
	}
	if reached.Load() != 0 || withKey.Load() != 0 {
		t.Fatalf("the other server got %d requests, %d with the key", reached.Load(), withKey.Load())
	}
}
