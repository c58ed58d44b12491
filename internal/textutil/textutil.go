package textutil

import "unicode/utf8"

// Ellipsis marks a cut made by Truncate and Fit.
const Ellipsis = "…"

// CutLen returns the largest m ≤ n such that s[:m] does not end inside a
// UTF-8 character of s: 0 when n ≤ 0, len(s) when n ≥ len(s). It looks
// back at most utf8.UTFMax-1 bytes, so where s is not UTF-8 it may return
// n itself.
func CutLen[T string | []byte](s T, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// Cut returns s cut to at most n bytes at a character boundary.
func Cut(s string, n int) string { return s[:CutLen(s, n)] }

// Truncate returns s when it is at most n bytes long; otherwise its first
// n bytes or fewer, cut at a character boundary, followed by Ellipsis (so
// the result may be up to len(Ellipsis) bytes longer than n).
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:CutLen(s, n)] + Ellipsis
}

// Fit returns s when it is at most max bytes long; otherwise s cut at a
// character boundary and followed by Ellipsis so that the whole is at most
// max bytes (just Ellipsis when max leaves no room for text).
func Fit(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:CutLen(s, max-len(Ellipsis))] + Ellipsis
}

// CompleteLen returns the length of the longest prefix of b that does not
// end inside a UTF-8 sequence which more bytes could still complete: the
// part of a chunk of a stream that can be decoded now.
func CompleteLen(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return len(b) - i
			}
			break
		}
	}
	return len(b)
}

// IsCode reports whether v has the shape of an error code: 1 to 64 bytes
// of ASCII letters, digits, '_', '-' and '.'. Only such a value of a
// server's error body is quoted back in a message.
func IsCode(v string) bool {
	if v == "" || len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}
