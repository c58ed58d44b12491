package discovery

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/internal/textutil"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []entry
	}{
		{"bare array (Together)", `[{"id":"a","context_length":8192},{"id":"b","type":"chat"}]`,
			[]entry{{id: "a", contextWindow: 8192}, {id: "b"}}},
		{"context members in order of preference",
			`{"data":[{"id":"a","context_window":100,"max_model_len":200,"meta":{"n_ctx_train":300}},
			{"id":"b","max_context_length":400,"meta":{"n_ctx_train":500}},
			{"id":"c","meta":{"n_ctx_train":600}},
			{"id":"d","context_length":"700"},
			{"id":"e","context_length":0,"context_window":800}]}`,
			[]entry{{id: "a", contextWindow: 200}, {id: "b", contextWindow: 400}, {id: "c", contextWindow: 600},
				{id: "d", contextWindow: 700}, {id: "e", contextWindow: 800}}},
		{"unusable context values are ignored",
			`{"data":[{"id":"a","max_model_len":-1},{"id":"b","max_model_len":1.5},{"id":"c","max_model_len":1e12},
			{"id":"d","max_model_len":true},{"id":"e","meta":"n_ctx_train"},{"id":"f","max_model_len":4096.0}]}`,
			[]entry{{id: "a"}, {id: "b"}, {id: "c"}, {id: "d"}, {id: "e"}, {id: "f", contextWindow: 4096}}},
		{"bad entries are skipped", `{"data":[{"id":"ok"},{"id":7},"str",null,[],{"id":"bad\u0000id"},
			{"id":"   "},{"id":"` + strings.Repeat("x", maxIDBytes+1) + `"},{"owned_by":"x"}]}`,
			[]entry{{id: "ok"}}},
		{"id falls back to model, then name", `{"models":[{"model":"m1","name":"n1"},{"name":"n2"},{"id":"i3","model":"m3"}]}`,
			[]entry{{id: "m1"}, {id: "n2"}, {id: "i3"}}},
		{"owned_by sanitized and bounded", `{"data":[{"id":"a","owned_by":"x\ty` + strings.Repeat("z", 200) + `"},{"id":"b","owned_by":5}]}`,
			[]entry{{id: "a", ownedBy: textutil.Fit("x y"+strings.Repeat("z", 200), maxOwnedByBytes)}, {id: "b"}}},
		// Read as it streams: a repeated "data" array adds its entries
		// (Discover folds duplicate ids), a repeated member in an entry
		// takes the last value.
		{"duplicate members and invalid UTF-8 tolerated", "{\"data\":[{\"id\":\"a\",\"id\":\"b\",\"owned_by\":\"o\xff\"}],\"data\":[{\"id\":\"c\"}]}",
			[]entry{{id: "b", ownedBy: "o\uFFFD"}, {id: "c"}}},
		{"empty list", `{"data":[],"models":[]}`, nil},
		{"data and models, in document order", `{"models":[{"name":"x"}],"data":[{"id":"x","owned_by":"o"}]}`,
			[]entry{{id: "x"}, {id: "x", ownedBy: "o"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, omitted, err := parseList(strings.NewReader(tt.body), 1000)
			if err != nil || omitted != 0 {
				t.Fatal(omitted, err)
			}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(entry{})); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
		})
	}
}

func TestErrorDetail(t *testing.T) {
	tests := []struct{ body, want string }{
		{``, ``},
		{`{"error":{"message":"m1","code":401}}`, `m1`},
		{`{"error":"m2"}`, `m2`},
		{`[{"error":{"message":"m3"}}]`, `m3`},
		{`{"message":"m4"}`, `m4`},
		{`{"detail":"m5"}`, `m5`},
		{`{"detail":[{"loc":["x"]}]}`, `{"detail":[{"loc":["x"]}]}`},
		{`  plain words  `, `plain words`},
		{`<html>oops</html>`, ``},
	}
	for _, tt := range tests {
		if got := errorDetail([]byte(tt.body)); got != tt.want {
			t.Errorf("errorDetail(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestSanitize(t *testing.T) {
	s := newScrubber(" " + testKey + " ")
	tests := []struct{ in, want string }{
		{"key " + testKey + " end", "key [redacted] end"},
		{"a\x00b\r\n\tc   d", "a b c d"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"masked sk-abc****xyz.", "masked [redacted]"},
		{"c1 \u0085 control", "c1 control"},
	}
	for _, tt := range tests {
		if got := s.sanitize(tt.in); got != tt.want {
			t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := s.sanitize(strings.Repeat("日", 1000))
	if len(long) > MaxMessageBytes || !strings.HasSuffix(long, "…") {
		t.Errorf("long message: %d bytes, %q...", len(long), long[:20])
	}
	if got := newScrubber("").sanitize("nothing to hide"); got != "nothing to hide" {
		t.Errorf("got %q", got)
	}
}

func TestParseListErrors(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{``, "empty"},
		{`  `, "empty"},
		{`{"data":[{"id":"a"}]`, "not valid JSON"},
		{`{"data":[{"id":"a"}]} x`, "not valid JSON"},
		{`{"data":{}}`, "not an array"},
		{`{"object":"list"}`, `no "data" array`},
		{`{"data":null}`, `no "data" array`},
		{`"list"`, "not a JSON object"},
		{`{"data":[{"id":7},{}]}`, "no entry has a usable model id"},
	} {
		if _, _, err := parseList(strings.NewReader(tt.body), 10); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseList(%q) = %v, want %q", tt.body, err, tt.want)
		}
	}
}

// A list of any length is read keeping at most maxEntries entries, the
// others counted.
func TestParseListKeepsAtMostMaxEntries(t *testing.T) {
	const n = 200_000
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"m` + strconv.Itoa(i) + `","object":"model"}`)
	}
	b.WriteString(`]}`)
	got, omitted, err := parseList(strings.NewReader(b.String()), 2000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2000 || cap(got) > 4096 || omitted != n-2000 || got[0].id != "m0" || got[1999].id != "m1999" {
		t.Fatalf("kept %d (cap %d), omitted %d, first %q", len(got), cap(got), omitted, got[0].id)
	}
}
