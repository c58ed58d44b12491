package customheader

import "testing"

func TestValidName(t *testing.T) {
	for _, n := range []string{"X-Tenant", "x", "a1!#$%&'*+-.^_`|~"} {
		if !ValidName(n) {
			t.Errorf("ValidName(%q) = false", n)
		}
	}
	for _, n := range []string{"", "X Tenant", "X:T", "é", "a\x00", "a\x7f", `a"`, "(a)", "a/b", "a@b", "{a}", "a,b", "a;b", "a=b", "a?b", "[a]", `a\b`, "<a>"} {
		if ValidName(n) {
			t.Errorf("ValidName(%q) = true", n)
		}
	}
	// Every printable ASCII byte but the RFC 9110 delimiters is a token
	// character.
	for c := byte(0); c < 0x80; c++ {
		want := c > ' ' && c < 0x7f && !containsByte(`"(),/:;<=>?@[\]{}`, c)
		if got := ValidName(string([]byte{c})); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", c, got, want)
		}
	}
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

func TestValidValue(t *testing.T) {
	for _, v := range []string{"", "plain", "tab\there", "ünïcode"} {
		if !ValidValue(v) {
			t.Errorf("ValidValue(%q) = false", v)
		}
	}
	for _, v := range []string{"a\r\nX-Evil: 1", "a\nb", "nul\x00", "del\x7f", "\x1b[0m"} {
		if ValidValue(v) {
			t.Errorf("ValidValue(%q) = true", v)
		}
	}
}

func TestReserved(t *testing.T) {
	for _, n := range []string{"Connection", "keep-alive", "TE", "Trailer", "Transfer-Encoding", "UPGRADE", "host", "Content-Length", "Proxy-Authorization", "proxy-anything"} {
		if !Reserved(n) {
			t.Errorf("Reserved(%q) = false", n)
		}
	}
	for _, n := range []string{"X-Tenant", "Authorization", "Content-Type", "Hosts", "proxy"} {
		if Reserved(n) {
			t.Errorf("Reserved(%q) = true", n)
		}
	}
}
