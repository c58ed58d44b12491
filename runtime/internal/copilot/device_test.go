package copilot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/copilot/copilottest"
)

func deviceWorld(t *testing.T, polls []string) (*copilottest.World, *copilottest.Clock, *[]time.Time, *sync.Mutex) {
	w := copilottest.NewWorld(t)
	c := copilottest.NewClock()
	var mu sync.Mutex
	var at []time.Time
	w.Handle("github.com", "/login/device/code", func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/json" || r.FormValue("client_id") != testIdentity.ClientID || r.FormValue("scope") != "read:user" {
			http.Error(rw, `{"error":"bad_request"}`, 400)
			return
		}
		fmt.Fprintf(rw, `{"device_code":%q,"user_code":"ABCD-1234","verification_uri":"https://github.com/login/device","interval":5,"expires_in":900}`, canaryDevice)
	})
	w.Handle("github.com", "/login/oauth/access_token", func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, c.Now())
		i := len(at) - 1
		mu.Unlock()
		if r.FormValue("device_code") != canaryDevice || r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:device_code" || r.FormValue("client_id") != testIdentity.ClientID {
			fmt.Fprint(rw, `{"error":"incorrect_device_code"}`)
			return
		}
		if i >= len(polls) {
			fmt.Fprint(rw, `{"error":"authorization_pending"}`)
			return
		}
		switch p := polls[i]; p {
		case "token":
			fmt.Fprintf(rw, `{"access_token":%q,"token_type":"bearer","scope":"read:user"}`, canaryGitHub)
		case "slow_down":
			fmt.Fprint(rw, `{"error":"slow_down","interval":10}`)
		default:
			fmt.Fprintf(rw, `{"error":%q,"error_description":"secret-ish text %s"}`, p, canaryDevice)
		}
	})
	return w, c, &at, &mu
}

func TestDeviceFlowPollTimes(t *testing.T) {
	w, c, at, _ := deviceWorld(t, []string{"authorization_pending", "authorization_pending", "slow_down", "token"})
	f := &DeviceFlow{Identity: testIdentity, HTTPClient: w.Client, Now: c.Now, Sleep: c.Sleep}
	start := c.Now()
	dl, err := f.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if dl.UserCode != "ABCD-1234" || dl.VerificationURI != "https://github.com/login/device" || dl.Interval != 5*time.Second || !dl.ExpiresAt.Equal(start.Add(900*time.Second)) {
		t.Fatalf("device login %+v", dl)
	}
	assertNoCanary(t, "the formatted device login", fmt.Sprintf("%v %+v %#v", dl, dl, dl))
	tok, err := f.Poll(context.Background(), dl)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Reveal() != canaryGitHub {
		t.Fatal("wrong token")
	}
	// First poll one interval after the start; pending keeps 5 s; slow_down
	// makes it 10 s (5 + 5, and GitHub's interval 10).
	var offs []time.Duration
	for _, x := range *at {
		offs = append(offs, x.Sub(start))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second, 25 * time.Second}
	if !slices.Equal(offs, want) {
		t.Fatalf("polls at %v, want %v", offs, want)
	}
}

func TestDeviceFlowTerminalErrors(t *testing.T) {
	seen := map[string]bool{}
	for _, code := range []string{"expired_token", "access_denied", "incorrect_device_code", "incorrect_client_credentials", "device_flow_disabled", "unsupported_grant_type", "something_new"} {
		w, c, _, _ := deviceWorld(t, []string{"authorization_pending", code})
		f := &DeviceFlow{Identity: testIdentity, HTTPClient: w.Client, Now: c.Now, Sleep: c.Sleep}
		dl, err := f.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Poll(context.Background(), dl)
		var de *DeviceError
		if !errors.As(err, &de) || de.Code != code {
			t.Fatalf("%s: %v", code, err)
		}
		if seen[err.Error()] {
			t.Errorf("%s shares its message: %s", code, err)
		}
		seen[err.Error()] = true
		assertNoCanary(t, code, err.Error())
		if strings.Contains(err.Error(), "secret-ish") {
			t.Errorf("%s echoes the description: %s", code, err)
		}
	}
}

func TestDeviceFlowLocalExpiry(t *testing.T) {
	w, c, at, mu := deviceWorld(t, nil) // pending forever
	f := &DeviceFlow{Identity: testIdentity, HTTPClient: w.Client, Now: c.Now, Sleep: c.Sleep}
	dl, err := f.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Poll(context.Background(), dl)
	var de *DeviceError
	if !errors.As(err, &de) || de.Code != "expired" {
		t.Fatalf("got %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(*at); n != 180 { // 900 s / 5 s
		t.Fatalf("%d polls, want 180", n)
	}
	if last := (*at)[len(*at)-1]; last.After(dl.ExpiresAt) {
		t.Fatalf("polled after expiry")
	}
}

func TestDeviceFlowCanceled(t *testing.T) {
	w, c, _, _ := deviceWorld(t, nil)
	f := &DeviceFlow{Identity: testIdentity, HTTPClient: w.Client, Now: c.Now, Sleep: c.Sleep}
	dl, err := f.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Poll(ctx, dl); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestDeviceFlowRefusesBadAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"phishing uri": `{"device_code":"d","user_code":"ABCD-1234","verification_uri":"https://github.com.evil.example/login/device","interval":5,"expires_in":900}`,
		"http uri":     `{"device_code":"d","user_code":"ABCD-1234","verification_uri":"http://github.com/login/device","interval":5,"expires_in":900}`,
		"odd code":     `{"device_code":"d","user_code":"<script>","verification_uri":"https://github.com/login/device","interval":5,"expires_in":900}`,
		"interval":     `{"device_code":"d","user_code":"ABCD-1234","verification_uri":"https://github.com/login/device","interval":100000,"expires_in":900}`,
	} {
		w := copilottest.NewWorld(t)
		w.Handle("github.com", "/login/device/code", func(rw http.ResponseWriter, r *http.Request) { fmt.Fprint(rw, body) })
		f := &DeviceFlow{Identity: testIdentity, HTTPClient: w.Client}
		if _, err := f.Begin(context.Background()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDeviceFlowNeedsClientID(t *testing.T) {
	w := copilottest.NewWorld(t)
	f := &DeviceFlow{HTTPClient: w.Client}
	_, err := f.Begin(context.Background())
	if !errors.Is(err, ErrNoClientID) || !strings.Contains(err.Error(), "settings.json") {
		t.Fatalf("got %v", err)
	}
	if w.Hits("github.com") != 0 {
		t.Fatal("a request was sent without a client id")
	}
}
