package providertest

import (
	"testing"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
)

// HostileCase is one hostile stream shape. It is an alias of
// a struct literal type so that the suites' tables may stay positional.
type HostileCase = struct {
	Name string
	Body string
	// Check, when set, says what the outcome must be besides the
	// invariants of edgetest.CheckHostile.
	Check func(t *testing.T, o edgetest.Outcome)
}

// Hostile is a decoder and its hostile shapes.
type Hostile struct {
	Open  edgetest.OpenDecoder
	Bound int // the decoder's event bound in the checks
	Cases []HostileCase
}

// Run runs every shape through the decoder.
func (h Hostile) Run(t *testing.T) {
	for _, tc := range h.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			o := edgetest.CheckHostile(t, []byte(tc.Body), h.Open, h.Bound)
			if tc.Check != nil {
				tc.Check(t, o)
			}
		})
	}
}

// Fuzz feeds the decoder the recorded streams of dir (framed by frame),
// the hostile shapes and what the fuzzer makes of them, reshaped event by
// event by ops (edgetest.Mutate), and checks edgetest.CheckHostile's
// invariants.
func (h Hostile) Fuzz(f *testing.F, dir string, frame func(tb testing.TB, name string, raw []byte) []byte) {
	for _, s := range edgetest.HostileSeeds(f, dir, h.Bound, frame) {
		f.Add(s, []byte{})
		f.Add(s, []byte{1, 2, 2, 3, 4, 5})
	}
	for _, tc := range h.Cases {
		if len(tc.Body) <= 2*h.Bound {
			f.Add([]byte(tc.Body), []byte{})
		}
	}
	f.Fuzz(func(t *testing.T, body, ops []byte) {
		edgetest.CheckHostile(t, edgetest.Mutate(body, ops), h.Open, h.Bound)
	})
}
