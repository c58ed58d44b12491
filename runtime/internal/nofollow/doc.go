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
