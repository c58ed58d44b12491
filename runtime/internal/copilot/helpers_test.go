package copilot

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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Canary secrets: any of them found in an output fails the test.
const (
	canaryGitHub  = "gho_CANARYgithubTOKEN0001"
	canarySession = "tid=CANARYsession;exp=9:mac0002"
	canaryDevice  = "CANARYdeviceCODE0003"
)

var canaries = []string{canaryGitHub, canarySession, canaryDevice}

// fakeNames are the host names the test dialer sends to the loopback
// server: GitHub's, every allowlisted Copilot origin, and an off-list one.
var fakeNames = []string{"github.com", "api.github.com", "api.githubcopilot.com", "api.individual.githubcopilot.com",
	"api.business.githubcopilot.com", "api.enterprise.githubcopilot.com", "evil.example"}

// world is one loopback TLS server standing in for every name, reached
// through a client whose dialer maps those names to it and which trusts an
// in-test CA only. The production URLs run unchanged.
type world struct {
	srv    *httptest.Server
	client *http.Client
	mu     sync.Mutex
	routes map[string]http.HandlerFunc // "host path" → handler
	hits   map[string]int              // host → requests
	auth   []string                    // every Authorization header seen
}

func newWorld(t *testing.T) *world {
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
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "fake github"}, DNSNames: fakeNames,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{routes: map[string]http.HandlerFunc{}, hits: map[string]int{}}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(w.serve))
	w.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	w.srv.StartTLS()
	t.Cleanup(w.srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	addr := w.srv.Listener.Addr().String()
	var d net.Dialer
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, hostport string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(hostport)
			for _, n := range fakeNames {
				if host == n && port == "443" {
					return d.DialContext(ctx, network, addr)
				}
			}
			return nil, &net.OpError{Op: "dial", Net: network, Err: errRefusedName}
		},
		ForceAttemptHTTP2: true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	w.client = &http.Client{Transport: tr}
	return w
}

var errRefusedName = &net.DNSError{Err: "not a fake name", IsNotFound: true}

func (w *world) handle(host, path string, h http.HandlerFunc) {
	w.mu.Lock()
	w.routes[host+" "+path] = h
	w.mu.Unlock()
}

func (w *world) serve(rw http.ResponseWriter, r *http.Request) {
	host := strings.TrimSuffix(r.Host, ":443")
	w.mu.Lock()
	w.hits[host]++
	if a := r.Header.Get("Authorization"); a != "" {
		w.auth = append(w.auth, host+" "+a)
	}
	h := w.routes[host+" "+r.URL.Path]
	w.mu.Unlock()
	if h == nil {
		http.Error(rw, "no route", http.StatusNotFound)
		return
	}
	h(rw, r)
}

func (w *world) hitsOf(host string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hits[host]
}

// clock is a fake clock: Sleep advances it and records the waits.
type clock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return nil
}

// memHost is a Host over memory, with an Identity.
type memHost struct {
	mu   sync.Mutex
	cred *Credential
	id   Identity
}

func (h *memHost) BeginDeviceLogin(context.Context) (DeviceLogin, error) {
	return DeviceLogin{}, ErrNoClientID
}
func (h *memHost) PollDeviceLogin(context.Context, DeviceLogin) (Credential, error) {
	return Credential{}, ErrNoClientID
}
func (h *memHost) SaveCredential(_ context.Context, c Credential) error {
	h.mu.Lock()
	h.cred = &c
	h.mu.Unlock()
	return nil
}
func (h *memHost) LoadCredential(context.Context) (Credential, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cred == nil {
		return Credential{}, ErrNotLoggedIn
	}
	return *h.cred, nil
}
func (h *memHost) Available(ctx context.Context, c Credential) error {
	cur, err := h.LoadCredential(ctx)
	if err != nil {
		return err
	}
	if cur.ID != c.ID {
		return ErrLoginReplaced
	}
	return nil
}
func (h *memHost) Identity() (Identity, error) { return h.id, nil }

var testIdentity = Identity{ClientID: "Ov23-test-client", EditorVersion: "octet-test/1.0", EditorPluginVersion: "octet-test-plugin/1.0", IntegrationID: "octet-test", UserAgent: "octet-test-agent/1.0"}

func newMemHost() *memHost {
	return &memHost{cred: &Credential{Token: NewSecret(canaryGitHub), ID: "login1"}, id: testIdentity}
}

// tokenHandler answers the exchange with session token tok and
// refresh_in, counting calls.
func tokenHandler(n *atomic.Int64, tok string, refreshIn int, extra string) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		n.Add(1)
		rw.Header().Set("Content-Type", "application/json")
		rw.Write([]byte(`{"token":"` + tok + `","expires_at":1999999999,"refresh_in":` + itoa(refreshIn) + extra + `}`))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func assertNoCanary(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, c := range canaries {
			if strings.Contains(s, c) {
				t.Errorf("%s contains the secret %q: %s", what, c, s)
			}
		}
	}
}
