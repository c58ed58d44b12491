package textutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutLen(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want int
	}{
		{"abc", 5, 3}, {"abc", 3, 3}, {"abc", 2, 2}, {"abc", 0, 0}, {"abc", -1, 0},
		{"a€b", 1, 1}, {"a€b", 2, 1}, {"a€b", 3, 1}, {"a€b", 4, 4},
		{"€x", 1, 0}, {"€x", 2, 0}, {"€x", 3, 3}, // a cut inside the first character keeps nothing
		{"😀😀", 5, 4}, {"😀😀", 7, 4},
		{"a\x80\x80\x80\x80b", 4, 4}, // not UTF-8: no boundary within reach, n itself
	} {
		if got := CutLen(c.s, c.n); got != c.want {
			t.Errorf("CutLen(%q, %d) = %d, want %d", c.s, c.n, got, c.want)
		}
		if got := CutLen([]byte(c.s), c.n); got != c.want {
			t.Errorf("CutLen([]byte(%q), %d) = %d, want %d", c.s, c.n, got, c.want)
		}
	}
}

func TestTruncateAndFit(t *testing.T) {
	for _, c := range []struct {
		s, trunc4, fit4 string
	}{
		{"abcd", "abcd", "abcd"},
		{"abcde", "abcd…", "a…"},
		{"ab€cd", "ab…", "a…"},
		{"€€", "€…", "…"},
	} {
		if got := Truncate(c.s, 4); got != c.trunc4 {
			t.Errorf("Truncate(%q, 4) = %q, want %q", c.s, got, c.trunc4)
		}
		if got := Fit(c.s, 4); got != c.fit4 {
			t.Errorf("Fit(%q, 4) = %q, want %q", c.s, got, c.fit4)
		}
	}
	long := strings.Repeat("é", 1000)
	for n := 0; n < 40; n++ {
		if got := Fit(long, 3+n); len(got) > 3+n || !utf8.ValidString(got) {
			t.Errorf("Fit(long, %d) = %q: longer than the bound or not UTF-8", 3+n, got)
		}
		if got := Truncate(long, n); len(got) > n+len(Ellipsis) || !utf8.ValidString(got) {
			t.Errorf("Truncate(long, %d) = %q", n, got)
		}
		if got := Cut(long, n); len(got) > n || !utf8.ValidString(got) {
			t.Errorf("Cut(long, %d) = %q", n, got)
		}
	}
}

func TestCompleteLen(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"a\xe2\x82", 1}, {"a\xe2\x82\xac", 4}, {"a\xf0\x9f\x98", 1},
		{"a\x80", 2}, // a stray continuation byte can never be completed
	} {
		if got := CompleteLen([]byte(c.s)); got != c.want {
			t.Errorf("CompleteLen(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestNoAllocationWithoutCut(t *testing.T) {
	s := strings.Repeat("x", 100)
	if n := testing.AllocsPerRun(100, func() { _, _, _ = Fit(s, 200), Truncate(s, 200), Cut(s, 50) }); n != 0 {
		t.Errorf("%v allocations where nothing is appended", n)
	}
}

func TestIsCode(t *testing.T) {
	for v, want := range map[string]bool{
		"":                      false,
		"slow_down":             true,
		"invalid-grant.v2":      true,
		"E42":                   true,
		strings.Repeat("a", 64): true,
		strings.Repeat("a", 65): false,
		"two words":             false,
		"quote\"":               false,
		"ünï":                   false,
		"line\nbreak":           false,
	} {
		if got := IsCode(v); got != want {
			t.Errorf("IsCode(%q) = %v, want %v", v, got, want)
		}
	}
}
