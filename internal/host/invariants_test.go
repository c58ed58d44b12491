package host

import "testing"

func checkInvariants(t *testing.T, out string) { t.Helper() }
