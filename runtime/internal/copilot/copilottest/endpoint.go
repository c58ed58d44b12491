package copilottest

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Endpoint is an embedder's fixed Copilot endpoint on loopback TLS, for
// the tests of the generic seam: an httptest TLS server answering with the
// test's handler, and a client that trusts it and fails the test on a
// request to any other host (the seam contacts no GitHub endpoint). It
// records every request it receives and can refuse the next one with a
// 401.
type Endpoint struct {
	// URL is the server's https:// URL, to parse as the seam's endpoint.
	URL string
	// Client reaches the server alone: a request for another host fails
	// the test and is refused.
	Client *http.Client

	mu     sync.Mutex
	seen   []Request
	refuse atomic.Bool
}

// Request is what the endpoint keeps of a request it received.
type Request struct {
	Method, Path string
	Header       http.Header
}

// NewEndpoint starts the endpoint, answering with h; it is closed when
// the test ends.
func NewEndpoint(t *testing.T, h http.HandlerFunc) *Endpoint {
	t.Helper()
	e := &Endpoint{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.seen = append(e.seen, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
		e.mu.Unlock()
		if e.refuse.CompareAndSwap(true, false) {
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		h(rw, r)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	e.URL = srv.URL
	e.Client = &http.Client{Transport: OnlyHost(t, u.Host, srv.Client().Transport)}
	return e
}

// RefuseNext answers the next request with 401 Unauthorized instead of
// the handler.
func (e *Endpoint) RefuseNext() { e.refuse.Store(true) }

// Seen returns the requests received so far, in order, each as line
// formats it, one a line.
func (e *Endpoint) Seen(line func(Request) string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, len(e.seen))
	for i, r := range e.seen {
		out[i] = line(r)
	}
	return strings.Join(out, "\n")
}

// OnlyHost returns a transport that sends through base the requests for
// host (host:port) and fails the test on, and refuses, any other.
func OnlyHost(t *testing.T, host string, base http.RoundTripper) http.RoundTripper {
	return onlyHost{t: t, host: host, base: base}
}

type onlyHost struct {
	t    *testing.T
	host string
	base http.RoundTripper
}

func (o onlyHost) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != o.host {
		o.t.Errorf("a request left for %s; only %s is allowed", r.URL, o.host)
		return nil, errors.New("refused by the test transport")
	}
	return o.base.RoundTrip(r)
}

// Inference posts body to the Copilot API's chat completions through c
// (the seam's client, which sends it to the endpoint) twice, the endpoint
// refusing the second once with a 401; each must end 200 OK, the second
// after the seam took a new session and sent it again.
func (e *Endpoint) Inference(t *testing.T, c *http.Client, body string) {
	t.Helper()
	if st := post(t, c, "https://api.githubcopilot.com/chat/completions", body); st != http.StatusOK {
		t.Fatalf("inference: HTTP %d", st)
	}
	e.RefuseNext()
	if st := post(t, c, "https://api.githubcopilot.com/chat/completions", body); st != http.StatusOK {
		t.Fatalf("inference after a 401: HTTP %d", st)
	}
}

// post posts body to url through c and returns the answer's status, its
// body read and closed; a transport error fails the test.
func post(t *testing.T, c *http.Client, url, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
