package wire

import "octet.dev/host/protocol"

// MaxIDBytes is the longest request, run or session ID (CONTRACT §4).
const MaxIDBytes = protocol.MaxIDBytes

// ValidID reports whether s is a valid request, run or session ID: the
// rule of protocol.ValidID, which states it once.
func ValidID(s string) bool { return protocol.ValidID(s) }
