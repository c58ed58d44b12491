package nofollow

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestClientDoesNotFollow: every redirect status comes back as the answer,
// and the target never sees a request, with a caller's client or without.
func TestClientDoesNotFollow(t *testing.T) {
	var reached atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer target.Close()
	for _, status := range []int{301, 302, 303, 307, 308} {
		src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/steal?token=s3cr3t", status)
		}))
		for _, base := range []*http.Client{nil, {}, {CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}} {
			req, _ := http.NewRequest(http.MethodPost, src.URL, strings.NewReader("body"))
			req.Header.Set("X-Api-Key", "k")
			resp, err := Client(base).Do(req)
			if err != nil {
				t.Fatalf("%d: %v", status, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != status || !IsRedirect(resp.StatusCode) {
				t.Fatalf("status %d, want %d", resp.StatusCode, status)
			}
		}
		src.Close()
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

// TestClientLeavesTheOriginalAlone: the caller's client keeps its own
// CheckRedirect.
func TestClientLeavesTheOriginalAlone(t *testing.T) {
	c := &http.Client{}
	Client(c)
	if c.CheckRedirect != nil {
		t.Fatal("the caller's client was changed")
	}
	if http.DefaultClient.CheckRedirect != nil {
		t.Fatal("http.DefaultClient was changed")
	}
}

func TestIsRedirect(t *testing.T) {
	if IsRedirect(200) || IsRedirect(400) || !IsRedirect(300) || !IsRedirect(399) {
		t.Fatal("IsRedirect")
	}
}
