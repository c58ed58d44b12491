package copilottest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// FakeNames are the host names the test dialer sends to the loopback
// server: GitHub's, every allowlisted Copilot origin, and an off-list one.
var FakeNames = []string{"github.com", "api.github.com", "api.githubcopilot.com", "api.individual.githubcopilot.com",
	"api.business.githubcopilot.com", "api.enterprise.githubcopilot.com", "evil.example"}

// world is one loopback TLS server standing in for every name, reached
// through a client whose dialer maps those names to it and which trusts an
// in-test CA only. The production URLs run unchanged.
type World struct {
	Srv    *httptest.Server
	Client *http.Client
	mu     sync.Mutex
	routes map[string]http.HandlerFunc // "host path" → handler
	hits   map[string]int              // host → requests
	Auth   []string                    // every Authorization header seen
}

func NewWorld(t *testing.T) *World {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "octet test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "fake github"}, DNSNames: FakeNames,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	w := &World{routes: map[string]http.HandlerFunc{}, hits: map[string]int{}}
	w.Srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.Srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	w.Srv.StartTLS()
	t.Cleanup(w.Srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	addr := w.Srv.Listener.Addr().String()
	var d net.Dialer
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, hostport string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(hostport)
			for _, n := range FakeNames {
				if host == n && port == "443" {
					return d.DialContext(ctx, network, addr)
				}
			}
			return nil, &net.OpError{Op: "dial", Net: network, Err: errRefusedName}
		},
		ForceAttemptHTTP2: true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	w.Client = &http.Client{Transport: tr}
	return w
}

var errRefusedName = &net.DNSError{Err: "not a fake name", IsNotFound: true}

func (w *World) Handle(host, path string, h http.HandlerFunc) {
	w.mu.Lock()
	w.routes[host+" "+path] = h
	w.mu.Unlock()
}

func (w *World) serve(rw http.ResponseWriter, r *http.Request) {
	host := strings.TrimSuffix(r.Host, ":443")
	w.mu.Lock()
	w.hits[host]++
	if a := r.Header.Get("Authorization"); a != "" {
		w.Auth = append(w.Auth, host+" "+a)
	}
	h := w.routes[host+" "+r.URL.Path]
	w.mu.Unlock()
	if h == nil {
		http.Error(rw, "no route", http.StatusNotFound)
		return
	}
	h(rw, r)
}

func (w *World) Hits(host string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hits[host]
}

// clock is a fake clock: Sleep advances it and records the waits.
type Clock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func NewClock() *Clock { return &Clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return nil
}
