// Package customheader holds the rules for the custom headers a run may send to
// its provider (CONTRACT §8): the syntax of a field name and of a value,
// and the names the transport keeps for itself. It is a leaf, so the
// catalog and the provider edge check headers the same way; the run
// validator (runtime/prepare.go, checkHeaders) is to move to it too.
package customheader

import "strings"

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

// ValidValue reports whether v has no control character other than tab
// (nor DEL), which would split or corrupt the request.
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
