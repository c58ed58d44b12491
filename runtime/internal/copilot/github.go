package copilot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/runtime/internal/nofollow"
)

// GitHub is the GitHub.com coding adapter's Host (what `octet --login
// copilot` uses): over a Login (FileHost: the device flow on github.com,
// the store ~/.octet/credentials/copilot.json, the identity), it exchanges
// the GitHub token for a session at api.github.com, checks the origin the
// exchange names against the allowlist (InferenceOrigins) before any
// session token is sent there, and reads the inventory's protocols from
// the Copilot API's GET /models.
type GitHub struct {
	Login Login
	// HTTPClient sends the exchange and the inventory; nil:
	// http.DefaultClient. Redirects are never followed.
	HTTPClient *http.Client
	Now        func() time.Time
}

// NewGitHubProvider is the coding adapter's Provider on login: the GitHub
// host, and the default Copilot API origin as the endpoint.
func NewGitHubProvider(login Login, client *http.Client, now func() time.Time) *Provider {
	return &Provider{Endpoint: MustEndpoint(DefaultInferenceOrigin), Host: &GitHub{Login: login, HTTPClient: client, Now: now}, HTTPClient: client, Now: now}
}

func (g *GitHub) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *GitHub) client() *http.Client { return nofollow.Client(g.HTTPClient) }

// Current re-checks the login s was exchanged for.
func (g *GitHub) Current(ctx context.Context, s Session) error {
	if g.Login == nil {
		return ErrNotLoggedIn
	}
	return g.Login.Available(ctx, s.login)
}

// Headers are the identity's.
func (g *GitHub) Headers() (map[string]string, error) {
	if g.Login == nil {
		return nil, ErrNotLoggedIn
	}
	id, err := g.Login.Identity()
	if err != nil {
		return nil, err
	}
	return id.Headers(), nil
}

// Models reads the inventory of s's origin; its supported_endpoints give
// each model's Protocol.
func (g *GitHub) Models(ctx context.Context, s Session) ([]Model, error) {
	hs, err := g.Headers()
	if err != nil {
		return nil, err
	}
	data, err := g.inventory(ctx, s, hs)
	if err != nil {
		return nil, err
	}
	t, err := buildTable(data)
	if err != nil {
		return nil, &InvalidModelsError{err}
	}
	return append(t.Models, t.Unroutable...), nil
}

// NewSession exchanges the current login for a session.
func (g *GitHub) NewSession(ctx context.Context) (Session, error) {
	if g.Login == nil {
		return Session{}, ErrNotLoggedIn
	}
	cred, err := g.Login.LoadCredential(ctx)
	if err != nil {
		return Session{}, err
	}
	if err := g.Login.Available(ctx, cred); err != nil {
		return Session{}, err
	}
	id, err := g.Login.Identity()
	if err != nil {
		return Session{}, err
	}
	return g.exchange(ctx, cred, id)
}

// exchange sends GET https://api.github.com/copilot_internal/v2/token
// with the GitHub token and reads the session.
func (g *GitHub) exchange(ctx context.Context, cred Credential, id Identity) (Session, error) {
	fail := func(status int, reason, msg string, err error) (Session, error) {
		return Session{}, &ExchangeError{Status: status, Reason: reason, msg: scrub(msg, cred.Token), err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, GitHubAPIOrigin+"/copilot_internal/v2/token", nil)
	if err != nil {
		return fail(0, ReasonUnreachable, "building the request", nil)
	}
	for k, v := range id.Headers() {
		req.Header.Set(k, v)
	}
	req.Header.Set("Authorization", "token "+cred.Token.Reveal())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-GitHub-Api-Version", "2025-04-01")
	fetched := g.now()
	resp, err := g.client().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if ctx.Err() != nil {
			return fail(0, ReasonUnreachable, "the request was canceled", ctx.Err())
		}
		return fail(0, ReasonUnreachable, "api.github.com cannot be reached: "+err.Error(), err)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	st := resp.StatusCode
	if rerr != nil && ctx.Err() != nil {
		return fail(st, ReasonUnreachable, "the request was canceled", ctx.Err())
	}
	if st < 200 || st > 299 {
		var e errorEnvelope
		_ = json.Unmarshal(data, &e)
		low := strings.ToLower(e.Message)
		switch {
		case nofollow.IsRedirect(st):
			return fail(st, ReasonHTTPStatus, fmt.Sprintf("HTTP %d: %s", st, nofollow.Refused), nil)
		case st == http.StatusUnauthorized:
			return fail(st, ReasonCredentialInvalid, "HTTP 401: GitHub refused the stored login; log in again (octet --login copilot)", nil)
		case st == http.StatusTooManyRequests || (st == http.StatusForbidden && strings.Contains(low, "rate limit")):
			s, err := fail(st, ReasonRateLimited, fmt.Sprintf("HTTP %d: GitHub's API rate limit was exceeded", st), nil)
			err.(*ExchangeError).RetryAfter = retryAfter(resp.Header, g.now())
			return s, err
		case st == http.StatusForbidden:
			nid := ""
			if e.ErrorDetails != nil && textutil.IsCode(e.ErrorDetails.NotificationID) {
				nid = e.ErrorDetails.NotificationID
			}
			msg := "HTTP 403: this GitHub account has no Copilot access"
			if nid != "" {
				msg += " (" + nid + ")"
			}
			s, err := fail(st, ReasonNotEntitled, msg, nil)
			err.(*ExchangeError).NotificationID = nid
			return s, err
		}
		return fail(st, ReasonHTTPStatus, fmt.Sprintf("HTTP %d", st), nil)
	}
	if rerr != nil || len(data) > maxAnswerBytes {
		return fail(st, ReasonProtocolError, "the answer could not be read or is larger than 1 MiB", rerr)
	}
	var env tokenEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return fail(st, ReasonProtocolError, "the answer is not a JSON object of the expected shape", nil)
	}
	switch {
	case env.Token == nil || *env.Token == "" || !headerSafe(*env.Token) || len(*env.Token) > 8192:
		return fail(st, ReasonProtocolError, "the answer has no usable token", nil)
	case env.ExpiresAt == nil || *env.ExpiresAt <= 0:
		return fail(st, ReasonProtocolError, "the answer has no expires_at", nil)
	case env.RefreshIn == nil || *env.RefreshIn <= 0 || *env.RefreshIn > maxRefreshIn.Seconds():
		return fail(st, ReasonProtocolError, "the answer has no usable refresh_in", nil)
	}
	tok := NewSecret(*env.Token)
	api := MustEndpoint(DefaultInferenceOrigin)
	if env.Endpoints != nil && env.Endpoints.API != nil {
		api, err = inferenceEndpoint(*env.Endpoints.API)
		if err != nil {
			return Session{}, &ExchangeError{Status: st, Reason: ReasonOriginNotAllowed, msg: scrub(err.Error(), cred.Token, tok), err: ErrOriginNotAllowed}
		}
	}
	return Session{
		Token: tok, API: api, FetchedAt: fetched,
		RefreshAt: fetched.Add(time.Duration(*env.RefreshIn * float64(time.Second))),
		ExpiresAt: time.Unix(int64(*env.ExpiresAt), 0), login: cred,
	}, nil
}

// inventory sends GET <api>/models with the session.
func (g *GitHub) inventory(ctx context.Context, s Session, hs map[string]string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.API.URL("/models"), nil)
	if err != nil {
		return nil, errors.New("building the inventory request failed")
	}
	setSessionHeaders(req.Header, s, hs)
	req.Header.Set("Accept", "application/json")
	resp, err := g.client().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, scrubErr("the Copilot API cannot be reached: "+err.Error(), err, s.Token)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, 8*maxAnswerBytes+1))
	switch {
	case nofollow.IsRedirect(resp.StatusCode):
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, nofollow.Refused)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("the Copilot API answered HTTP %d to GET /models", resp.StatusCode)
	case rerr != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("reading the model inventory failed: %w", ctx.Err())
	case rerr != nil:
		return nil, errors.New("reading the model inventory failed")
	case len(data) > 8*maxAnswerBytes:
		return nil, errors.New("the model inventory is larger than 8 MiB")
	}
	return data, nil
}
