package copilot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/runtime/internal/nofollow"
)

// Bounds of a device authorization (RFC 8628 §3.2). GitHub answers
// interval 5 and expires_in 900.
const (
	DefaultPollInterval = 5 * time.Second
	MaxPollInterval     = 60 * time.Second
	SlowDownStep        = 5 * time.Second
	MaxDeviceExpiry     = 30 * time.Minute
	maxUserCode         = 32
	maxVerificationURI  = 256
	maxAnswerBytes      = 1 << 20
)

// DeviceLogin is a started device authorization: what the user is shown
// (UserCode at VerificationURI, both safe to print) and what polling needs.
// Every value is bounded: Interval in [1 s, MaxPollInterval], ExpiresAt at
// most MaxDeviceExpiry after the start.
type DeviceLogin struct {
	UserCode        string
	VerificationURI string
	Interval        time.Duration
	ExpiresAt       time.Time
	DeviceCode      Secret
}

// DeviceError is a terminal answer of the device flow; Code is GitHub's
// (or "expired" when the local deadline passed).
type DeviceError struct {
	Code string
	msg  string
}

func (e *DeviceError) Error() string { return "copilot login: " + e.msg }

// deviceMessages give each terminal device-flow error its own message.
var deviceMessages = map[string]string{
	"expired_token":                "the code expired before it was entered on GitHub; run the login again",
	"access_denied":                "the authorization was denied on GitHub; nothing was stored",
	"incorrect_device_code":        "GitHub did not recognise the device code; run the login again",
	"incorrect_client_credentials": "GitHub does not know the OAuth client id configured as copilot.client_id in ~/.octet/settings.json",
	"device_flow_disabled":         "the device flow is not enabled for the OAuth app configured as copilot.client_id; enable it in the app's settings on GitHub",
	"unsupported_grant_type":       "GitHub refused the device-code grant type",
}

// DeviceFlow runs the OAuth device authorization grant against github.com.
type DeviceFlow struct {
	Identity   Identity
	HTTPClient *http.Client // nil: http.DefaultClient; redirects are never followed
	Now        func() time.Time
	// Sleep waits d or until ctx ends; nil: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (f *DeviceFlow) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *DeviceFlow) sleep(ctx context.Context, d time.Duration) error {
	if f.Sleep != nil {
		return f.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// post sends a form to github.com and decodes the JSON answer into out.
// It returns the status; the body is never echoed.
func (f *DeviceFlow) post(ctx context.Context, path string, form url.Values, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, GitHubOrigin+path, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if ua := f.Identity.UserAgent; ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	resp, err := nofollow.Client(f.HTTPClient).Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("copilot login: github.com cannot be reached: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil && ctx.Err() != nil {
		return resp.StatusCode, ctx.Err()
	}
	if err != nil || len(data) > maxAnswerBytes {
		return resp.StatusCode, fmt.Errorf("copilot login: reading github.com's answer (HTTP %d) failed", resp.StatusCode)
	}
	if nofollow.IsRedirect(resp.StatusCode) {
		return resp.StatusCode, fmt.Errorf("copilot login: github.com answered HTTP %d: %s", resp.StatusCode, nofollow.Refused)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.StatusCode, fmt.Errorf("copilot login: github.com answered HTTP %d without the expected JSON object", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

type deviceCodeAnswer struct {
	DeviceCode      string   `json:"device_code"`
	UserCode        string   `json:"user_code"`
	VerificationURI string   `json:"verification_uri"`
	Interval        *float64 `json:"interval"`
	ExpiresIn       *float64 `json:"expires_in"`
	Error           string   `json:"error"`
}

// Begin asks github.com for a device code. It needs Identity.ClientID
// (ErrNoClientID otherwise).
func (f *DeviceFlow) Begin(ctx context.Context) (DeviceLogin, error) {
	if f.Identity.ClientID == "" {
		return DeviceLogin{}, ErrNoClientID
	}
	if err := f.Identity.Validate(); err != nil {
		return DeviceLogin{}, err
	}
	start := f.now()
	var a deviceCodeAnswer
	status, err := f.post(ctx, "/login/device/code", url.Values{"client_id": {f.Identity.ClientID}, "scope": {f.Identity.scope()}}, &a)
	dc := NewSecret(a.DeviceCode)
	if err != nil {
		return DeviceLogin{}, scrubErr(err.Error(), err, dc)
	}
	if a.Error != "" || status != http.StatusOK {
		code := ""
		if textutil.IsCode(a.Error) {
			code = a.Error
		}
		if m, ok := deviceMessages[code]; ok {
			return DeviceLogin{}, &DeviceError{Code: code, msg: m}
		}
		return DeviceLogin{}, &DeviceError{Code: code, msg: fmt.Sprintf("github.com refused to start the login (HTTP %d%s)", status, codeSuffix(code))}
	}
	switch {
	case a.DeviceCode == "" || !headerSafe(a.DeviceCode) || len(a.DeviceCode) > 256:
		return DeviceLogin{}, errors.New("copilot login: github.com's answer has no usable device_code")
	case !validUserCode(a.UserCode):
		return DeviceLogin{}, errors.New("copilot login: github.com's answer has no usable user_code")
	}
	uri, err := checkVerificationURI(a.VerificationURI)
	if err != nil {
		return DeviceLogin{}, err
	}
	interval := DefaultPollInterval
	if a.Interval != nil {
		if *a.Interval < 1 || *a.Interval > MaxPollInterval.Seconds() {
			return DeviceLogin{}, errors.New("copilot login: github.com's answer has an interval outside 1 to 60 seconds")
		}
		interval = time.Duration(*a.Interval * float64(time.Second))
	}
	expires := 15 * time.Minute
	if a.ExpiresIn != nil {
		if *a.ExpiresIn < 1 {
			return DeviceLogin{}, errors.New("copilot login: github.com's answer has a non-positive expires_in")
		}
		expires = min(time.Duration(*a.ExpiresIn*float64(time.Second)), MaxDeviceExpiry)
	}
	return DeviceLogin{UserCode: a.UserCode, VerificationURI: uri, Interval: interval, ExpiresAt: start.Add(expires), DeviceCode: dc}, nil
}

func codeSuffix(code string) string {
	if code == "" {
		return ""
	}
	return ", " + code
}

// validUserCode accepts GitHub's "XXXX-XXXX" shape: up to 32 upper-case
// letters, digits and '-'.
func validUserCode(v string) bool {
	if v == "" || len(v) > maxUserCode {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// checkVerificationURI accepts only an https URL on github.com itself
// (anti-phishing: the code is entered where the login happens).
func checkVerificationURI(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || len(raw) > maxVerificationURI || u.Scheme != "https" || u.User != nil || !strings.EqualFold(u.Host, "github.com") {
		return "", errors.New("copilot login: github.com's answer has a verification_uri that is not an https address on github.com; refusing to show it")
	}
	return u.String(), nil
}

type tokenAnswer struct {
	AccessToken string   `json:"access_token"`
	TokenType   string   `json:"token_type"`
	Error       string   `json:"error"`
	Interval    *float64 `json:"interval"`
}

// Poll polls github.com until the user authorizes the login, a terminal
// error comes, the code expires or ctx ends. The first poll comes one
// interval after the call; authorization_pending keeps the interval;
// slow_down adds 5 s (or takes GitHub's new interval when that is longer).
// It returns the GitHub OAuth token.
func (f *DeviceFlow) Poll(ctx context.Context, l DeviceLogin) (Secret, error) {
	interval := l.Interval
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	slowed := false
	for {
		if f.now().Add(interval).After(l.ExpiresAt) {
			msg := "the code expired before it was entered on GitHub; run the login again"
			if slowed {
				msg += " (GitHub asked to slow down: if this machine's clock drifts, as in some VMs, correct it)"
			}
			return Secret{}, &DeviceError{Code: deviceExpired, msg: msg}
		}
		if err := f.sleep(ctx, interval); err != nil {
			return Secret{}, err
		}
		var a tokenAnswer
		status, err := f.post(ctx, "/login/oauth/access_token", url.Values{
			"client_id": {f.Identity.ClientID}, "device_code": {l.DeviceCode.Reveal()},
			"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"},
		}, &a)
		tok := NewSecret(a.AccessToken)
		if err != nil {
			return Secret{}, scrubErr(err.Error(), err, l.DeviceCode, tok)
		}
		switch a.Error {
		case "":
			if status != http.StatusOK || a.AccessToken == "" || !headerSafe(a.AccessToken) || len(a.AccessToken) > 1024 {
				return Secret{}, fmt.Errorf("copilot login: github.com answered HTTP %d without a usable access_token", status)
			}
			return tok, nil
		case "authorization_pending":
		case "slow_down":
			slowed = true
			interval += SlowDownStep
			if a.Interval != nil && *a.Interval >= 1 && *a.Interval <= MaxPollInterval.Seconds() {
				interval = max(interval, time.Duration(*a.Interval*float64(time.Second)))
			}
			interval = min(interval, MaxPollInterval)
		default:
			code := ""
			if textutil.IsCode(a.Error) {
				code = a.Error
			}
			if m, ok := deviceMessages[code]; ok {
				return Secret{}, &DeviceError{Code: code, msg: m}
			}
			return Secret{}, &DeviceError{Code: code, msg: "github.com refused the login (HTTP " + strconv.Itoa(status) + codeSuffix(code) + ")"}
		}
	}
}

// deviceExpired is DeviceError.Code when the device code expired before
// the user entered it (RFC 8628's expired_token, or the local deadline).
const deviceExpired = "expired"
