package edge

import (
	"strings"
	"testing"
)

// TestStringsAreStable: every string Make returned keeps its value while
// later ones fill the chunk, cross into new chunks, and bypass it (long
// ones); the input buffer may change after the call.
func TestStringsAreStable(t *testing.T) {
	var a Strings
	in := make([]byte, 0, 2*stringOwn)
	var got, want []string
	for i := 0; i < 5000; i++ {
		n := i % 97
		if i%500 == 0 {
			n = stringOwn + 1 // a long one
		}
		in = in[:0]
		for j := 0; j < n; j++ {
			in = append(in, byte('a'+(i+j)%26))
		}
		got = append(got, a.Make(in))
		want = append(want, string(in))
		for j := range in {
			in[j] = '#' // the caller reuses its buffer
		}
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("string %d changed: %q, want %q", i, got[i], want[i])
		}
	}
	if s := a.Make(nil); s != "" {
		t.Fatalf("Make(nil) = %q", s)
	}
}

// TestStringsAllocation: short strings cost a chunk per stringChunk bytes,
// not an allocation each.
func TestStringsAllocation(t *testing.T) {
	var a Strings
	b := []byte(strings.Repeat("x", 12))
	allocs := testing.AllocsPerRun(1000, func() { _ = a.Make(b) })
	if allocs > 0.01 {
		t.Fatalf("%.3f allocations per short string, want about %.4f", allocs, 12.0/stringChunk)
	}
}
