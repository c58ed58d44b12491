package discovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/nofollow"
)

// Issue codes (protocol.DiscoveryCodes):
//   - protocol.CodeDiscoveryFailed: the endpoint could not be queried or
//     answered with a non-2xx status (bad base URL, connection refused,
//     DNS, TLS, 401, 500).
//   - protocol.CodeDiscoveryTimeout: no complete answer arrived within the
//     timeout.
//   - protocol.CodeDiscoveryInvalid: the endpoint answered 2xx, but not
//     with a model list (not JSON, no list, no usable entry) or with a body
//     over MaxBodyBytes.
//   - protocol.CodeDiscoveryTruncated: the endpoint listed more models than
//     are kept (MaxModelsPerEndpoint here, or the caller's room for them);
//     the first ones are listed and Issue.Omitted says how many were not.

// Limits.
const (
	// DefaultTimeout bounds each endpoint's query when Discover is given 0.
	DefaultTimeout = 2 * time.Second
	// MaxBodyBytes bounds a model list response body.
	MaxBodyBytes = 4 << 20
	// MaxModelsPerEndpoint bounds the models kept from one endpoint's list
	// (the first ones in the list's order): at most about 1 KiB each, they
	// stay a few MiB of memory however long the list, and a typical entry
	// (a short id, about 250 bytes in the models event) leaves room in
	// the event's 1 MiB frame for the catalog and another endpoint.
	MaxModelsPerEndpoint = 2000
	// MaxMessageBytes bounds Issue.Message.
	MaxMessageBytes = 512
	// maxErrorBody bounds how much of a non-2xx body is read for its message.
	maxErrorBody = 64 << 10
)

// Endpoint is one configured OpenAI-compatible server to list.
type Endpoint struct {
	// Provider names the endpoint in results and issues (the configured
	// provider name).
	Provider string
	// BaseURL is the endpoint root as configured, normally ending in "/v1";
	// the list is requested from BaseURL + "/models". Trailing slashes are
	// ignored.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer APIKey" when not empty. It
	// never appears in an Issue.
	APIKey string
}

// Model is one model an endpoint reported.
type Model struct {
	// Provider is the Endpoint's Provider.
	Provider string
	// ID is the model name as the server reports it, to be sent back as the
	// request's "model".
	ID string
	// OwnedBy is the server's owned_by, or "" (sanitized, at most 128 bytes).
	OwnedBy string
	// ContextWindowTokens is the context window the server reports (vLLM
	// max_model_len, llama.cpp meta.n_ctx_train, ...), or 0 when it does not.
	ContextWindowTokens int
}

// Issue is one endpoint whose listing failed, or was cut short.
type Issue struct {
	Provider string
	// Code is one of protocol.DiscoveryCodes (discovery_failed,
	// discovery_timeout, discovery_invalid, discovery_truncated).
	Code protocol.Code
	// Omitted is, for protocol.CodeDiscoveryTruncated, how many usable models were left out.
	Omitted int
	// Message says what went wrong: sanitized, at most MaxMessageBytes, and
	// never containing the endpoint's API key.
	Message string
}

// Discover lists the models of every endpoint in eps, querying them
// concurrently with client (http.DefaultClient when nil), which never
// follows a redirect: a 3xx answer is an Issue (protocol.CodeDiscoveryFailed) naming the
// status. Each query is
// bounded by timeout (DefaultTimeout when timeout <= 0) and by ctx. Models
// come back sorted by provider, then ID, without duplicates; an endpoint
// that fails adds one Issue instead, and never fails the others. Issues are
// sorted by provider, keeping the order of eps among equal providers.
// Discover returns when every query has finished.
func Discover(ctx context.Context, client *http.Client, eps []Endpoint, timeout time.Duration) ([]Model, []Issue) {
	if len(eps) == 0 {
		return nil, nil
	}
	// The request carries the endpoint's key: never follow a redirect
	// (nofollow), whatever client the caller gave.
	client = nofollow.Client(client)
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	type result struct {
		models []Model
		issue  *Issue
	}
	results := make([]result, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() {
			ms, is := query(ctx, client, ep, timeout)
			results[i] = result{ms, is}
		})
	}
	wg.Wait()

	var models []Model
	var issues []Issue
	for _, r := range results {
		models = append(models, r.models...)
		if r.issue != nil {
			issues = append(issues, *r.issue)
		}
	}
	slices.SortStableFunc(issues, func(a, b Issue) int { return cmp.Compare(a.Provider, b.Provider) })
	return mergeModels(models), issues
}

// mergeModels sorts ms by provider and ID and folds duplicates into the first
// one, filling an empty OwnedBy or a zero context window from the others.
func mergeModels(ms []Model) []Model {
	if len(ms) == 0 {
		return nil
	}
	slices.SortStableFunc(ms, func(a, b Model) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.ID, b.ID))
	})
	out := ms[:1]
	for _, m := range ms[1:] {
		last := &out[len(out)-1]
		if m.Provider != last.Provider || m.ID != last.ID {
			out = append(out, m)
			continue
		}
		if last.OwnedBy == "" {
			last.OwnedBy = m.OwnedBy
		}
		if last.ContextWindowTokens == 0 {
			last.ContextWindowTokens = m.ContextWindowTokens
		}
	}
	return slices.Clip(out)
}

// query lists one endpoint. It returns the models, or an issue.
func query(parent context.Context, client *http.Client, ep Endpoint, timeout time.Duration) ([]Model, *Issue) {
	s := newScrubber(ep.APIKey)
	fail := func(code protocol.Code, format string, args ...any) *Issue {
		return &Issue{Provider: ep.Provider, Code: code, Message: s.sanitize(fmt.Sprintf(format, args...))}
	}

	target, err := modelsURL(ep.BaseURL)
	if err != nil {
		return nil, fail(protocol.CodeDiscoveryFailed, "%v", err)
	}
	key := strings.TrimSpace(ep.APIKey)
	if strings.ContainsFunc(key, isControl) {
		return nil, fail(protocol.CodeDiscoveryFailed, "GET %s: not sent: the API key contains control characters", target)
	}

	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fail(protocol.CodeDiscoveryFailed, "GET %s: %v", target, err)
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}

	// transportIssue classifies an error from sending the request or reading
	// the answer. ctx.Err() names what ended the query first: this query's
	// deadline (or an earlier one of parent), or parent's cancellation.
	transportIssue := func(what string, err error) *Issue {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded), ctx.Err() == nil && isTimeout(err):
			return fail(protocol.CodeDiscoveryTimeout, "GET %s: no complete answer within %s", target, timeout)
		case ctx.Err() != nil:
			return fail(protocol.CodeDiscoveryFailed, "GET %s: discovery canceled", target)
		}
		return fail(protocol.CodeDiscoveryFailed, "GET %s: %s%s", target, what, cause(err))
	}

	resp, err := client.Do(req)
	if err != nil {
		return nil, transportIssue("", err)
	}
	defer resp.Body.Close()

	if nofollow.IsRedirect(resp.StatusCode) {
		// Not followed, and the Location is not repeated.
		return nil, fail(protocol.CodeDiscoveryFailed, "GET %s: HTTP %s: %s", target, statusText(resp), nofollow.Refused)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		msg := fmt.Sprintf("GET %s: HTTP %s", target, statusText(resp))
		if detail := errorDetail(body); detail != "" {
			msg += ": " + detail
		}
		return nil, fail(protocol.CodeDiscoveryFailed, "%s", msg)
	}
	if resp.ContentLength > MaxBodyBytes {
		return nil, fail(protocol.CodeDiscoveryInvalid, "GET %s: the answer is %d bytes; the limit is %d", target, resp.ContentLength, MaxBodyBytes)
	}
	// The list is decoded as it arrives: memory holds the kept entries
	// and one entry's JSON, whatever the length of the list.
	body := &boundedBody{r: resp.Body, left: MaxBodyBytes + 1}
	entries, omitted, err := parseList(body, MaxModelsPerEndpoint)
	switch {
	case body.left <= 0:
		return nil, fail(protocol.CodeDiscoveryInvalid, "GET %s: the answer is larger than %d bytes", target, MaxBodyBytes)
	case body.err != nil:
		return nil, transportIssue("reading the answer: ", body.err)
	case err != nil:
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			return nil, fail(protocol.CodeDiscoveryInvalid, "GET %s: not a model list (Content-Type %s): %v", target, ct, err)
		}
		return nil, fail(protocol.CodeDiscoveryInvalid, "GET %s: not a model list: %v", target, err)
	}
	out := make([]Model, len(entries))
	for i, e := range entries {
		out[i] = Model{Provider: ep.Provider, ID: e.id, OwnedBy: e.ownedBy, ContextWindowTokens: e.contextWindow}
	}
	if omitted > 0 {
		return out, &Issue{Provider: ep.Provider, Code: protocol.CodeDiscoveryTruncated, Omitted: omitted, Message: TruncatedMessage(omitted)}
	}
	return out, nil
}

// TruncatedMessage is the message of a protocol.CodeDiscoveryTruncated issue.
func TruncatedMessage(omitted int) string {
	return fmt.Sprintf("%d more models were left out: at most %d are listed per endpoint, and the inventory must fit one 1 MiB models event", omitted, MaxModelsPerEndpoint)
}

// boundedBody reads at most left bytes of r, and records r's first read
// error other than io.EOF.
type boundedBody struct {
	r    io.Reader
	left int64
	err  error
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// modelsURL returns base+"/models" after checking that base is an absolute
// http or https URL without userinfo, query or fragment.
func modelsURL(base string) (string, error) {
	if base == "" {
		return "", errors.New("the base URL is empty")
	}
	if strings.ContainsFunc(base, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", errors.New("the base URL contains spaces or control characters")
	}
	u, err := url.Parse(base)
	switch {
	case err != nil:
		return "", errors.New("the base URL does not parse")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("the base URL scheme must be http or https")
	case u.Opaque != "" || u.Hostname() == "":
		return "", errors.New("the base URL has no host")
	case u.User != nil:
		return "", errors.New("the base URL must not contain userinfo")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(base, "#"):
		return "", errors.New("the base URL must not contain a query or fragment")
	}
	return strings.TrimRight(base, "/") + "/models", nil
}

// isTimeout reports whether err is a timeout (a context deadline, or a
// net.Error timeout such as http.Client.Timeout).
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// cause returns the text of err without the method and URL a *url.Error
// repeats, since messages already start with them.
func cause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// statusText renders "401 Unauthorized", or the bare code for an unknown one.
func statusText(resp *http.Response) string {
	if t := http.StatusText(resp.StatusCode); t != "" {
		return fmt.Sprintf("%d %s", resp.StatusCode, t)
	}
	return fmt.Sprintf("%d", resp.StatusCode)
}
