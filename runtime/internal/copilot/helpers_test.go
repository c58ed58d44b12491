package copilot

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Canary secrets: any of them found in an output fails the test.
const (
	canaryGitHub  = "gho_CANARYgithubTOKEN0001"
	canarySession = "tid=CANARYsession;exp=9:mac0002"
	canaryDevice  = "CANARYdeviceCODE0003"
)

var canaries = []string{canaryGitHub, canarySession, canaryDevice}

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
