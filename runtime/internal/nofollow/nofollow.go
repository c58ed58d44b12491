// Package nofollow is the one rule every HTTP client of the host follows
// about redirects: it never follows one.
//
// net/http's default client follows 301, 302, 303, 307 and 308 and, on a
// change of host, strips only Authorization, Www-Authenticate and Cookie:
// x-api-key, api-key and every custom header go along to whatever origin
// the Location names, and 307 and 308 re-send the body. A provider (or
// anything posing as one: a compromised gateway, a captive portal, a DNS
// answer) could collect the operator's credentials that way. Following only
// same-origin redirects that keep the method and body would be safe too,
// but no model API this host speaks redirects its calls, so the simplest
// rule that cannot go wrong is taken: a redirect is an answer like any
// other non-2xx status, and the caller reports it as a failure naming the
// status and never the Location (which may carry a token in its query).
//
// Client wraps every http.Client the host uses for provider calls (the
// provider edge), live model discovery and the Codex token refresh,
// whatever client the embedder configured.
package nofollow

import "net/http"

// Client returns a copy of c (of http.DefaultClient when c is nil) that
// never follows a redirect: Do returns the 3xx response itself, with its
// body, and the request never leaves for the Location. The transport,
// cookie jar and timeout are c's; c itself is not changed.
func Client(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cp := *c
	cp.CheckRedirect = refuse
	return &cp
}

// refuse is the CheckRedirect of Client: http.ErrUseLastResponse makes Do
// return the redirect response instead of a new request.
func refuse(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// IsRedirect reports whether status is a 3xx answer, which a Client hands
// back instead of following.
func IsRedirect(status int) bool { return status >= 300 && status <= 399 }

// Refused explains a refused redirect, after the status the caller names
// ("HTTP 307: " + Refused). It never names the Location.
const Refused = "redirect refused: the host never follows redirects, so that credentials cannot reach another address; configure the final URL"
