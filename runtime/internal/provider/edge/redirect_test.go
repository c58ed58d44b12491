package edge

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"octet.dev/host/runtime/provider"
)

// TestStreamRefusesRedirects: a provider answering with any redirect gets
// a provider error naming the status, never the Location, and the other
// origin never sees a request, its key or its custom headers, whatever the
// client's own CheckRedirect says.
func TestStreamRefusesRedirects(t *testing.T) {
	var stolen atomic.Int32
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) { stolen.Add(1) })
	for _, status := range []int{301, 302, 303, 307, 308} {
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", other.URL+"/collect?secret=loc-secret-value")
			w.WriteHeader(status)
			w.Write([]byte(`<a href="` + other.URL + `">moved</a>`))
		})
		follow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
		r, errs := testMode.Route(Config{BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: follow,
			Headers: map[string]string{"X-Gateway-Token": "gateway-secret-123"}, IdleTimeout: time.Second})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		_, err := testMode.Stream(context.Background(), r, []byte(`{}`))
		pe := asError(t, err)
		if pe.Kind != provider.FailHTTPStatus || pe.Status != status || !pe.RequestWritten {
			t.Fatalf("%d: %+v", status, pe)
		}
		if !strings.Contains(pe.Error(), " "+strconv.Itoa(status)+": redirect refused") {
			t.Errorf("%d: error %q does not name the status", status, pe.Error())
		}
		if strings.Contains(pe.Error(), other.URL) || strings.Contains(pe.Error(), "loc-secret") || strings.Contains(pe.Error(), "127.0.0.1") {
			t.Errorf("%d: error names the Location: %q", status, pe.Error())
		}
		if follow.CheckRedirect == nil {
			t.Fatal("the caller's client was changed")
		}
	}
	if n := stolen.Load(); n != 0 {
		t.Fatalf("the other origin got %d requests", n)
	}
}
