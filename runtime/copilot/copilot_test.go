package copilot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	internal "octet.dev/host/runtime/internal/copilot"
	"octet.dev/host/runtime/internal/copilot/copilottest"
)

const (
	ghToken    = "gho_CANARYloginTOKEN0009"
	deviceCode = "CANARYdevice0009"
)

func writeSettings(t *testing.T, home, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(home, ".octet"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".octet", "settings.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func loginWorld(t *testing.T, final string) *copilottest.World {
	w := copilottest.NewWorld(t)
	w.Handle("github.com", "/login/device/code", func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(rw, `{"device_code":%q,"user_code":"WXYZ-9876","verification_uri":"https://github.com/login/device","interval":5,"expires_in":900}`, deviceCode)
	})
	n := 0
	w.Handle("github.com", "/login/oauth/access_token", func(rw http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			io.WriteString(rw, `{"error":"authorization_pending"}`)
			return
		}
		io.WriteString(rw, final)
	})
	return w
}

// captureStdout runs fn with os.Stdout redirected and returns what it got.
func captureStdout(t *testing.T, fn func()) string {
	t.Helper()
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = wr
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	defer func() { os.Stdout = old }()
	fn()
	wr.Close()
	return <-done
}

func TestHeadlessLoginAndLogout(t *testing.T) {
	home := t.TempDir()
	writeSettings(t, home, `{"tool_policy":{"allow_edit":false},"copilot":{"client_id":"Ov23-operator","editor_version":"octet/0.1"}}`)
	w := loginWorld(t, `{"access_token":"`+ghToken+`","token_type":"bearer"}`)
	c := copilottest.NewClock()
	var errOut bytes.Buffer
	opened := false
	stdout := captureStdout(t, func() {
		err := Login(context.Background(), LoginOptions{Headless: true, Out: &errOut, Home: home, HTTPClient: w.Client, Now: c.Now, Sleep: c.Sleep,
			OpenBrowser: func(string) error { opened = true; return nil }})
		if err != nil {
			t.Fatal(err)
		}
	})
	if stdout != "" || opened {
		t.Fatalf("headless login wrote to stdout (%q) or opened a browser (%v)", stdout, opened)
	}
	if !strings.Contains(errOut.String(), "https://github.com/login/device") || !strings.Contains(errOut.String(), "WXYZ-9876") {
		t.Fatalf("instructions: %q", errOut.String())
	}
	for _, s := range []string{ghToken, deviceCode} {
		if strings.Contains(errOut.String(), s) {
			t.Fatalf("the output holds a secret: %q", errOut.String())
		}
	}
	file := filepath.Join(home, ".octet", "credentials", "copilot.json")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credential file: %v %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(file)); di.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v", di.Mode())
	}
	if _, err := os.Stat(file + ".lock"); err != nil {
		t.Fatal("no lock file beside the credential")
	}
	data, _ := os.ReadFile(file)
	if strings.Contains(string(data), deviceCode) {
		t.Fatal("the device code was stored")
	}
	h := &internal.FileHost{Home: NewFileHost(home, nil).Home}
	cred, err := h.LoadCredential(context.Background())
	if err != nil || cred.Token.Reveal() != ghToken {
		t.Fatalf("load: %v", err)
	}
	// A second login replaces the first: the old credential is rejected.
	w2 := loginWorld(t, `{"access_token":"gho_second0000","token_type":"bearer"}`)
	if err := Login(context.Background(), LoginOptions{Headless: true, Home: home, HTTPClient: w2.Client, Now: c.Now, Sleep: c.Sleep}); err != nil {
		t.Fatal(err)
	}
	if err := h.Available(context.Background(), cred); !errors.Is(err, internal.ErrLoginReplaced) {
		t.Fatalf("a replaced login is still available: %v", err)
	}
	var out bytes.Buffer
	if err := Logout(home, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "not revoked") {
		t.Fatalf("logout must say it is local: %q", out.String())
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatal("the credential survived the logout")
	}
	if _, err := h.LoadCredential(context.Background()); !errors.Is(err, internal.ErrNotLoggedIn) {
		t.Fatalf("after logout: %v", err)
	}
	out.Reset()
	if err := Logout(home, &out); err != nil || !strings.Contains(out.String(), "No GitHub Copilot login") {
		t.Fatalf("second logout: %v %q", err, out.String())
	}
}

func TestLoginWithoutClientID(t *testing.T) {
	home := t.TempDir()
	w := loginWorld(t, `{}`)
	err := Login(context.Background(), LoginOptions{Headless: true, Home: home, HTTPClient: w.Client})
	if !errors.Is(err, ErrNoClientID) || !strings.Contains(err.Error(), `"copilot": {"client_id"`) {
		t.Fatalf("got %v", err)
	}
	if w.Hits("github.com") != 0 {
		t.Fatal("requests without a client id")
	}
	writeSettings(t, home, `{"copilot":{"client_id":"x","editor":"typo"}}`)
	if err := Login(context.Background(), LoginOptions{Headless: true, Home: home, HTTPClient: w.Client}); err == nil || !strings.Contains(err.Error(), "copilot") {
		t.Fatalf("an unknown member was accepted: %v", err)
	}
}

func TestLoginDeniedStoresNothing(t *testing.T) {
	home := t.TempDir()
	writeSettings(t, home, `{"copilot":{"client_id":"Ov23-operator"}}`)
	w := loginWorld(t, `{"error":"access_denied"}`)
	c := copilottest.NewClock()
	err := Login(context.Background(), LoginOptions{Headless: true, Home: home, HTTPClient: w.Client, Now: c.Now, Sleep: c.Sleep})
	var de *DeviceError
	if !errors.As(err, &de) || de.Code != "access_denied" {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".octet", "credentials", "copilot.json")); !os.IsNotExist(err) {
		t.Fatal("a denied login stored a credential")
	}
}

func TestLoginInterrupted(t *testing.T) {
	home := t.TempDir()
	writeSettings(t, home, `{"copilot":{"client_id":"Ov23-operator"}}`)
	w := loginWorld(t, `{"error":"authorization_pending"}`)
	ctx, cancel := context.WithCancel(context.Background())
	c := copilottest.NewClock()
	err := Login(ctx, LoginOptions{Headless: true, Home: home, HTTPClient: w.Client, Now: c.Now, Sleep: func(sctx context.Context, d time.Duration) error {
		cancel()
		return sctx.Err()
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// TestLoginInterruptedInFlight: Ctrl-C while a request to github.com is in
// flight (the device code request, a poll) keeps context.Canceled through
// the error scrubbing, so the CLI exits 130, not 1.
func TestLoginInterruptedInFlight(t *testing.T) {
	for _, stage := range []string{"/login/device/code", "/login/oauth/access_token"} {
		t.Run(stage, func(t *testing.T) {
			home := t.TempDir()
			writeSettings(t, home, `{"copilot":{"client_id":"Ov23-operator"}}`)
			w := loginWorld(t, `{"error":"authorization_pending"}`)
			release := make(chan struct{}) // the handler returns before the server closes
			t.Cleanup(func() { close(release) })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			arrived := make(chan struct{}, 1)
			w.Handle("github.com", stage, func(rw http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			})
			go func() { <-arrived; cancel() }()
			c := copilottest.NewClock()
			err := Login(ctx, LoginOptions{Headless: true, Home: home, HTTPClient: w.Client, Now: c.Now, Sleep: c.Sleep})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v; want an error matching context.Canceled", err)
			}
		})
	}
}
