package protocol

// MaxIDBytes is the longest request, run or session ID (CONTRACT §4).
const MaxIDBytes = 128

// ValidID reports whether s is a valid request, run or session ID:
// 1..MaxIDBytes bytes of ASCII letters, digits, '-', '_', '.', ':'
// (CONTRACT §4). This is the one statement of the rule: the wire codec and
// the session store both ask it. IDs are identifiers, not paths: callers
// that map them to files must still encode them (an ID may be "." or "..").
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !IDByte(s[i]) {
			return false
		}
	}
	return true
}

// IDByte reports whether c may appear in an ID.
func IDByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '-', c == '_', c == '.', c == ':':
		return true
	}
	return false
}
