package customheader

import (
	"fmt"
	"strings"
	"testing"
)

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

func TestValidValueEveryByte(t *testing.T) {
	// Every ASCII control byte but tab is refused, and DEL; printable
	// ASCII and bytes from 0x80 up (obs-text) pass.
	for c := 0; c < 0x100; c++ {
		want := c == '\t' || (c >= ' ' && c != 0x7f)
		if got := ValidValue("a" + string([]byte{byte(c)}) + "b"); got != want {
			t.Errorf("ValidValue(%q) = %v, want %v", byte(c), got, want)
		}
	}
}

func TestCredential(t *testing.T) {
	for _, n := range []string{"Authorization", "authorization", "X-API-KEY", "x-api-key", "Cookie"} {
		if !Credential(n) {
			t.Errorf("Credential(%q) = false", n)
		}
	}
	for _, n := range []string{"X-Tenant", "Authorizations", "Set-Cookie", "api-key"} {
		if Credential(n) {
			t.Errorf("Credential(%q) = true", n)
		}
	}
}

func TestCheck(t *testing.T) {
	many := map[string]string{}
	for i := range MaxEntries + 1 {
		many[fmt.Sprintf("X-H%d", i)] = "v"
	}
	atLimit := map[string]string{}
	for k, v := range many {
		if len(atLimit) < MaxEntries {
			atLimit[k] = v
		}
	}
	for _, c := range []struct {
		name string
		h    map[string]string
		want string // a part of the error; "" for none
	}{
		{"none", nil, ""},
		{"ordinary", map[string]string{"X-Tenant": "acme", "OpenAI-Organization": "org", "X-Empty": ""}, ""},
		{"tab and UTF-8 in a value", map[string]string{"X-Tenant": "a\tb ünï"}, ""},
		{"at the entry limit", atLimit, ""},
		{"at the size limit", map[string]string{"X-Big": strings.Repeat("v", MaxBytes-len("X-Big"))}, ""},
		{"over the entry limit", many, "65 entries; at most 64"},
		{"over the size limit", map[string]string{"X-Big": strings.Repeat("v", MaxBytes-len("X-Big")+1)}, "total 65537 bytes; the limit is 65536"},
		{"escape in a value", map[string]string{"X-Tenant": "\x1b[0m"}, `custom header "X-Tenant" has a control character`},
		{"CR LF in a value", map[string]string{"X-Tenant": "a\r\nX-Evil: 1"}, "control character"},
		{"DEL in a value", map[string]string{"X-Tenant": "a\x7f"}, "control character"},
		{"authorization", map[string]string{"authorization": "Bearer x"}, "may not set Authorization; credentials go in api_key"},
		{"x-api-key", map[string]string{"X-Api-Key": "k"}, "may not set X-Api-Key"},
		{"cookie", map[string]string{"COOKIE": "a=b"}, "may not set Cookie"},
		{"proxy authorization", map[string]string{"Proxy-Authorization": "x"}, "hop-by-hop or routing"},
		{"host", map[string]string{"Host": "x"}, "hop-by-hop or routing"},
		{"bad name", map[string]string{"X Tenant": "v"}, `"X Tenant" is not a valid header name`},
		{"twice", map[string]string{"X-A": "1", "x-a": "2"}, "x-a is given more than once"},
		// Names are checked before values, in sorted order: the failure
		// reported does not depend on the map's order.
		{"first in order", map[string]string{"A-Bad": "\n", "B Bad": "v", "Connection": "x"}, `"B Bad" is not a valid header name`},
	} {
		err := Check(c.h)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestCheckNames(t *testing.T) {
	many := make([]string, MaxEntries+1)
	for i := range many {
		many[i] = "x-h" + strings.Repeat("a", i+1)
	}
	tests := []struct {
		name    string
		names   []string
		wantErr string
	}{
		{name: "none"},
		{name: "ordinary", names: []string{"x-tenant", "X-Request-Id", "OpenAI-Organization"}},
		{name: "at limit", names: many[:MaxEntries]},
		{name: "over limit", names: many, wantErr: "at most 64"},
		{name: "connection", names: []string{"Connection"}, wantErr: "hop-by-hop"},
		{name: "keep-alive", names: []string{"keep-alive"}, wantErr: "hop-by-hop"},
		{name: "proxy prefix", names: []string{"Proxy-Authorization"}, wantErr: "hop-by-hop"},
		{name: "te", names: []string{"TE"}, wantErr: "hop-by-hop"},
		{name: "trailer", names: []string{"Trailer"}, wantErr: "hop-by-hop"},
		{name: "transfer-encoding", names: []string{"Transfer-Encoding"}, wantErr: "hop-by-hop"},
		{name: "upgrade", names: []string{"Upgrade"}, wantErr: "hop-by-hop"},
		{name: "host", names: []string{"HOST"}, wantErr: "hop-by-hop"},
		{name: "content-length", names: []string{"Content-Length"}, wantErr: "hop-by-hop"},
		{name: "duplicate ignoring case", names: []string{"X-A", "x-a"}, wantErr: "more than once"},
		{name: "empty name", names: []string{""}, wantErr: "not a valid header name"},
		{name: "space", names: []string{"x tenant"}, wantErr: "not a valid header name"},
		{name: "colon", names: []string{"x:y"}, wantErr: "not a valid header name"},
		{name: "newline", names: []string{"x-a\r\nx-b"}, wantErr: "not a valid header name"},
		{name: "non-ascii", names: []string{"x-ünï"}, wantErr: "not a valid header name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckNames(tt.names)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}
