package fakeprovider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestFaultRedirect: the fault answers a 3xx whose Location is To plus the
// request's path, consumes no turn, and a client that follows it (net/http's
// default) shows up at the second server with the credentials it carried:
// the leak the host's no-redirect rule (runtime/internal/nofollow) prevents.
func TestFaultRedirect(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		s := newServer(t, threeTurns)
		other := newServer(t, threeTurns)
		s.InjectFault(FaultRedirect{Code: code, To: other.URL()})

		raw, _ := json.Marshal(requestBody(ModeAnthropic, "m"))
		req, _ := http.NewRequest(http.MethodPost, endpoint(s, ModeAnthropic), bytes.NewReader(raw))
		req.Header.Set("X-Api-Key", "sk-ant-secret")
		req.Header.Set("X-Gateway-Token", "gw-token-value")
		c := newClient(t)
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		if resp.StatusCode != code || resp.Header.Get("Location") != other.URL()+"/v1/messages" {
			t.Fatalf("%d: status %d, Location %q", code, resp.StatusCode, resp.Header.Get("Location"))
		}
		if r := s.Requests(); len(r) != 1 || r[0].Fault != "redirect("+itoa(code)+")" || s.TurnsLeft() != 3 {
			t.Fatalf("%d: requests %+v, turns left %d", code, r, s.TurnsLeft())
		}

		// A following client: net/http keeps x-api-key and the custom
		// header on a change of port, and the second server records them.
		s.InjectFault(FaultRedirect{Code: code, To: other.URL()})
		req, _ = http.NewRequest(http.MethodPost, endpoint(s, ModeAnthropic), bytes.NewReader(raw))
		req.Header.Set("X-Api-Key", "sk-ant-secret")
		req.Header.Set("X-Gateway-Token", "gw-token-value")
		resp, err = newClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		got := other.Requests()
		if len(got) != 1 || !got[0].HadKey || got[0].KeySHA256 != KeyFingerprint("sk-ant-secret") || got[0].Header.Get("X-Gateway-Token") != "gw-token-value" {
			t.Fatalf("%d: the second server saw %+v", code, got)
		}
		if wantPost := code == 307 || code == 308; (got[0].Method == http.MethodPost) != wantPost {
			t.Errorf("%d: followed with %s", code, got[0].Method)
		}
	}
}

func TestFaultRedirectChecked(t *testing.T) {
	s := newServer(t, threeTurns)
	for _, f := range []FaultRedirect{{Code: 300, To: "http://x"}, {Code: 307}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "FaultRedirect") {
					t.Errorf("%+v: panic %v", f, r)
				}
			}()
			s.InjectFault(f)
		}()
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
