package customheader

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"octet.dev/host/internal/textutil"
)

// Limits of CONTRACT §8.
const (
	// MaxEntries is the largest number of custom headers a route may set.
	MaxEntries = 64
	// MaxBytes bounds the headers' names and values, added up.
	MaxBytes = 64 << 10
)

// ValidName reports whether name is a non-empty RFC 9110 token, the
// syntax of an HTTP field name.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ValidValue reports whether v has no control character other than tab:
// no ASCII control byte (CR and LF would split the request) and no DEL.
// Bytes from 0x80 up are field content (RFC 9110 obs-text) and pass.
func ValidValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// reserved lists the hop-by-hop and routing headers (lower case) that
// belong to the transport.
var reserved = map[string]bool{
	"connection":        true,
	"keep-alive":        true,
	"te":                true,
	"trailer":           true,
	"transfer-encoding": true,
	"upgrade":           true,
	"host":              true,
	"content-length":    true,
}

// Reserved reports whether name (any letter case) is a hop-by-hop or
// routing header a route may not set: Connection, Keep-Alive, Proxy-*, TE,
// Trailer, Transfer-Encoding, Upgrade, Host, Content-Length.
func Reserved(name string) bool {
	lower := strings.ToLower(name)
	return reserved[lower] || strings.HasPrefix(lower, "proxy-")
}

// credentials lists the headers (lower case) that carry a credential: only
// a route's api_key sets them.
// (Proxy-Authorization is one too, refused with every Proxy-* header as
// Reserved.)
var credentials = []string{"authorization", "x-api-key", "cookie"}

// Credential reports whether name (any letter case) is a header that
// carries a credential (Authorization, X-Api-Key, Cookie), which custom
// headers may not set.
func Credential(name string) bool {
	return slices.Contains(credentials, strings.ToLower(name))
}

// CheckNames checks the names of a route's custom headers: at most
// MaxEntries, each a valid field name (ValidName), none a hop-by-hop or
// routing header (Reserved) nor a credential header (Credential), none
// repeated (letter case ignored). The error says which name fails first,
// in the order given.
func CheckNames(names []string) error {
	if len(names) > MaxEntries {
		return fmt.Errorf("custom_headers has %d entries; at most %d are allowed", len(names), MaxEntries)
	}
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !ValidName(n) {
			return fmt.Errorf("custom_headers: %s is not a valid header name", strconv.Quote(textutil.Truncate(n, 64)))
		}
		if Reserved(n) {
			return fmt.Errorf("custom_headers: %s is a hop-by-hop or routing header and cannot be set", textutil.Truncate(n, 64))
		}
		if Credential(n) {
			return fmt.Errorf("custom_headers may not set %s; credentials go in api_key", http.CanonicalHeaderKey(n))
		}
		lower := strings.ToLower(n)
		if seen[lower] {
			return fmt.Errorf("custom_headers: %s is given more than once", textutil.Truncate(n, 64))
		}
		seen[lower] = true
	}
	return nil
}

// Check checks a route's custom headers as a whole (CONTRACT §8): the
// names as CheckNames does, in sorted order so that the first failure
// reported does not depend on map order; every value free of control
// characters but tab (ValidValue); and the names and values together at
// most MaxBytes.
func Check(h map[string]string) error {
	names := make([]string, 0, len(h))
	total := 0
	for n, v := range h {
		names = append(names, n)
		total += len(n) + len(v)
	}
	slices.Sort(names)
	if err := CheckNames(names); err != nil {
		return err
	}
	for _, n := range names {
		if !ValidValue(h[n]) {
			return fmt.Errorf("custom header %s has a control character in its value; only tab is allowed", strconv.Quote(textutil.Truncate(n, 64)))
		}
	}
	if total > MaxBytes {
		return fmt.Errorf("custom_headers total %d bytes; the limit is %d", total, MaxBytes)
	}
	return nil
}
