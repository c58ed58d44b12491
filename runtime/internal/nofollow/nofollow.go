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
