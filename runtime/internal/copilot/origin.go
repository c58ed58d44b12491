package copilot

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// The GitHub.com hosts of the login and the session exchange. No
// enterprise authority and no environment override exists.
const (
	// GitHubOrigin serves the device flow.
	GitHubOrigin = "https://github.com"
	// GitHubAPIOrigin serves the session exchange.
	GitHubAPIOrigin = "https://api.github.com"
	// DefaultInferenceOrigin is the Copilot API used when the exchange
	// names none.
	DefaultInferenceOrigin = "https://api.githubcopilot.com"
)

// InferenceOrigins is the fixed allowlist of Copilot API origins a session
// token may be sent to. An origin the exchange names off this list fails
// closed before any token is sent.
var InferenceOrigins = []string{
	"https://api.githubcopilot.com",
	"https://api.individual.githubcopilot.com",
	"https://api.business.githubcopilot.com",
	"https://api.enterprise.githubcopilot.com",
}

// Endpoint is an explicit origin root: "https://host[:port]" with no path
// (a lone "/" is allowed), query, fragment or userinfo. Plain http is
// accepted only for a literal loopback IP address (127.0.0.0/8 or ::1),
// which only a test server can be. The zero Endpoint is invalid.
type Endpoint struct {
	origin string // scheme://host[:port], lower case
}

// ParseEndpoint validates raw as an Endpoint.
func ParseEndpoint(raw string) (Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoint{}, errors.New("copilot: the endpoint is not a valid URL")
	}
	switch {
	case u.Opaque != "" || u.Host == "":
		return Endpoint{}, errors.New("copilot: the endpoint needs a scheme and a host")
	case u.User != nil:
		return Endpoint{}, errors.New("copilot: the endpoint may not carry userinfo")
	case u.RawQuery != "" || u.ForceQuery:
		return Endpoint{}, errors.New("copilot: the endpoint may not carry a query")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return Endpoint{}, errors.New("copilot: the endpoint may not carry a fragment")
	case u.Path != "" && u.Path != "/":
		return Endpoint{}, errors.New("copilot: the endpoint is an origin root and may not carry a path")
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	switch scheme {
	case "https":
	case "http":
		ip := net.ParseIP(u.Hostname())
		if ip == nil || !ip.IsLoopback() {
			return Endpoint{}, errors.New("copilot: the endpoint must use https (plain http only to a literal loopback address, for tests)")
		}
	default:
		return Endpoint{}, fmt.Errorf("copilot: the endpoint scheme must be https")
	}
	if scheme == "https" {
		host = strings.TrimSuffix(host, ":443")
	}
	return Endpoint{origin: scheme + "://" + host}, nil
}

// MustEndpoint is ParseEndpoint for constants; it panics on an error.
func MustEndpoint(raw string) Endpoint {
	e, err := ParseEndpoint(raw)
	if err != nil {
		panic(err)
	}
	return e
}

// String is the origin, e.g. "https://api.githubcopilot.com".
func (e Endpoint) String() string { return e.origin }

// IsZero reports whether e is the zero (invalid) Endpoint.
func (e Endpoint) IsZero() bool { return e.origin == "" }

// URL returns the origin joined with path (which starts with "/").
func (e Endpoint) URL(path string) string { return e.origin + path }

// Host is the host[:port] of the origin.
func (e Endpoint) Host() string {
	_, h, _ := strings.Cut(e.origin, "://")
	return h
}

// ErrOriginNotAllowed is matched by the error of an inference origin off
// the allowlist.
var ErrOriginNotAllowed = errors.New("copilot: origin_not_allowed")

// inferenceEndpoint validates an origin the session exchange named
// (endpoints.api) against InferenceOrigins. Nothing is sent to it when it
// fails.
func inferenceEndpoint(raw string) (Endpoint, error) {
	e, err := ParseEndpoint(raw)
	if err != nil || !slices.Contains(InferenceOrigins, e.origin) {
		return Endpoint{}, fmt.Errorf("%w: the session names a Copilot API origin that is not on the allowlist (%s)", ErrOriginNotAllowed, strings.Join(InferenceOrigins, ", "))
	}
	return e, nil
}
