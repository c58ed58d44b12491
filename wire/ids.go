package wire

// MaxIDBytes is the longest request, run or session ID (CONTRACT §4).
const MaxIDBytes = 128

// ValidID reports whether s is a valid request, run or session ID:
// 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'. IDs are
// identifiers, not paths: callers that map them to files must still encode
// them (an ID may be "." or "..").
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}
