package edge

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// scanSeeds are values of every kind, with the shapes the scanner declines.
var scanSeeds = []string{
	`"plain"`, `"caf\u00e9 \ud83e\udd8a \n\"q\"\\\/\b\f\r\t"`, `"lone \ud800 x"`, `"lone \udc00"`, `"\ud83e\u0041"`,
	"\"bad \xff\"", "\"ctl \x01\"", `"\x"`, `"\u12"`, `"unterminated`, `"é"`,
	`null`, `true`, `false`, `tru`, `0`, `-0`, `12`, `-345`, `1.5`, `1e2`, `-1E-2`, `01`, `-`, `1.`, `1e`, `123456789012345`, `1234567890123456`,
	`[]`, `[1, "a", null, [true], {}]`, `[1,]`, `{}`, ` { "a" : 1 , "b" : [ ] } `, `{"a" 1}`, `{"a":1,}`, `{"\u0061":1}`, `{"a":1} x`,
	strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
}

func TestSkipMatchesJSON(t *testing.T) {
	for _, in := range scanSeeds {
		checkSkip(t, []byte(in))
	}
	// The innermost empty array scans no element, so maxSkipDepth+1
	// arrays are the deepest accepted.
	for depth, want := range map[int]bool{maxSkipDepth + 1: true, maxSkipDepth + 2: false} {
		deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		if s := NewScanner([]byte(deep)); s.Skip() != want {
			t.Errorf("%d nested arrays: Skip = %v, want %v", depth, !want, want)
		}
	}
	if s := NewScanner([]byte(" [1,{\"a\":[null]}] ")); !s.Skip() || !s.AtEnd() {
		t.Error("a valid nested value must be accepted")
	}
}

// checkSkip asserts that a value Skip accepts whole is valid JSON.
func checkSkip(t *testing.T, data []byte) {
	s := NewScanner(data)
	if s.Skip() && s.AtEnd() && !jsontext.Value(data).IsValid(Lenient) {
		t.Fatalf("Skip accepted invalid JSON %q", data)
	}
}

// checkString asserts that when StringOrNull accepts data, json v2 decodes
// the same string.
func checkString(t *testing.T, data []byte) (accepted bool) {
	var fast string
	s := NewScanner(data)
	if !s.StringOrNull(&fast) || !s.AtEnd() {
		return false
	}
	var slow string
	if err := json.Unmarshal(data, &slow, Lenient); err != nil {
		t.Fatalf("StringOrNull accepted what json v2 rejects (%v): %q", err, data)
	}
	if fast != slow {
		t.Fatalf("StringOrNull(%q) = %q, json v2 %q", data, fast, slow)
	}
	return true
}

// checkInt asserts that when IntOrNull accepts data, json v2 decodes the
// same int.
func checkInt(t *testing.T, data []byte) (accepted bool) {
	var fast int
	s := NewScanner(data)
	if !s.IntOrNull(&fast) || !s.AtEnd() {
		return false
	}
	var slow int
	if err := json.Unmarshal(data, &slow, Lenient); err != nil {
		t.Fatalf("IntOrNull accepted what json v2 rejects (%v): %q", err, data)
	}
	if fast != slow {
		t.Fatalf("IntOrNull(%q) = %d, json v2 %d", data, fast, slow)
	}
	return true
}

func TestStringOrNull(t *testing.T) {
	accepted := map[string]bool{}
	for _, in := range scanSeeds {
		accepted[in] = checkString(t, []byte(in))
	}
	for in, want := range map[string]bool{
		`"plain"`: true, `null`: true, `"é"`: true,
		`"caf\u00e9 \ud83e\udd8a \n\"q\"\\\/\b\f\r\t"`: true, // a paired surrogate decodes like json v2
		`"lone \ud800 x"`: false, `"lone \udc00"`: false, `"\ud83e\u0041"`: false, // json v2 replaces these
		"\"bad \xff\"": false, "\"ctl \x01\"": false, `12`: false,
	} {
		if accepted[in] != want {
			t.Errorf("StringOrNull(%s) accepted = %v, want %v", in, accepted[in], want)
		}
	}
}

func TestIntOrNull(t *testing.T) {
	accepted := map[string]bool{}
	for _, in := range scanSeeds {
		accepted[in] = checkInt(t, []byte(in))
	}
	for in, want := range map[string]bool{
		`null`: true, `0`: true, `-0`: true, `12`: true, `-345`: true, `123456789012345`: true,
		`1.5`: false, `1e2`: false, `01`: false, `1234567890123456`: false, `"1"`: false,
	} {
		if accepted[in] != want {
			t.Errorf("IntOrNull(%s) accepted = %v, want %v", in, accepted[in], want)
		}
	}
	// A declined integer leaves the position for the caller to skip.
	s := NewScanner([]byte(`1.5`))
	var n int
	if s.Integer(&n) || !s.Skip() || !s.AtEnd() {
		t.Error("Integer must leave the position unchanged when it declines")
	}
}

func TestUnescape(t *testing.T) {
	for _, raw := range []string{
		`plain`, `\n\t\"\\\/\b\f\r`, `\u00e9\u20ac`, `\ud83e\udd8a`, `\ud83e`, `\ud83ex`, `\ud83e\n`, `\ud83e\u0041`,
		`\udd8a`, `x\ud83e\udd8a\ud83e\udd8ay`, `\ud83e\ud83e\udd8a`, `\\ud83e`,
	} {
		got, ok := Unescape([]byte("keep:"), []byte(raw))
		if paired := SurrogatesPaired([]byte(raw)); paired != ok {
			t.Errorf("SurrogatesPaired(%s) = %v, Unescape says %v", raw, paired, ok)
		}
		if !ok {
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(`"`+raw+`"`), &want, Lenient); err != nil {
			t.Fatal(err)
		}
		if string(got) != "keep:"+want {
			t.Errorf("Unescape(%s) = %q, want %q", raw, got, "keep:"+want)
		}
	}
}

func TestSeen(t *testing.T) {
	var s Seen
	if !s.First(1) || !s.First(4) || s.First(1) || s.First(4) || !s.First(2) {
		t.Error("First must report each bit once")
	}
}

// FuzzScanner checks the primitives against json v2: whatever they accept,
// json v2 accepts and decodes the same.
func FuzzScanner(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSkip(t, data)
		checkString(t, data)
		checkInt(t, data)
		s := NewScanner(data)
		if raw, escaped, _, ok := s.RawString(); ok && escaped {
			if _, ok := Unescape(nil, raw); ok != SurrogatesPaired(raw) {
				t.Fatalf("SurrogatesPaired and Unescape disagree on %q", raw)
			}
		}
	})
}
