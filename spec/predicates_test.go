package spec_test

import (
	"errors"
	"strings"
	"testing"

	"octet.dev/host/spec"
)

// predicate is one named check of a predicate table, over transcripts of
// E (frames, run events, recovery events).
type predicate[E any] struct {
	name  string
	check func([]E) error
}

// checkVerdict holds the verdict err of predicate name on a transcript to
// want: a predicate want maps must fail with a violation that blames the
// unit ("frame", "event") at that index; any other must hold.
func checkVerdict(t *testing.T, transcript, name, unit string, err error, want map[string]int) {
	t.Helper()
	at, bad := want[name]
	if !bad {
		if err != nil {
			t.Errorf("%s: %s: unexpected %v", transcript, name, err)
		}
		return
	}
	var v *spec.Violation
	if !errors.As(err, &v) {
		t.Errorf("%s: %s: want a violation at %s %d, got %v", transcript, name, unit, at, err)
		return
	}
	if v.Invariant != name || v.Frame != at {
		t.Errorf("%s: %s: got %v, want a violation of %s at %s %d", transcript, name, v, name, unit, at)
	}
}

// checkMentions holds the error err of joined, the check that joins the
// predicates, to want: it mentions predicate name exactly when want maps
// it.
func checkMentions(t *testing.T, transcript, joined, name string, err error, want map[string]int) {
	t.Helper()
	_, bad := want[name]
	if got := err != nil && strings.Contains(err.Error(), " "+name+" "); got != bad {
		t.Errorf("%s: %s mentions %s: %v, want %v (%v)", transcript, joined, name, got, bad, err)
	}
}

// checkPrefixClosed checks that every predicate of preds but those skip
// names is prefix-closed: on every transcript of up to 5 events over
// alpha on which it holds, it holds on the prefix without the last event.
// It returns how many (predicate, transcript) pairs held.
func checkPrefixClosed[E any](t *testing.T, alpha []E, preds []predicate[E], skip func(name string) bool) int {
	t.Helper()
	checked := 0
	var visit func(events []E)
	visit = func(events []E) {
		for _, p := range preds {
			if skip(p.name) || p.check(events) != nil {
				continue
			}
			checked++
			if err := p.check(events[:len(events)-1]); err != nil {
				t.Fatalf("%s holds on %v but not on its prefix: %v", p.name, events, err)
			}
		}
		if len(events) < 5 {
			for _, e := range alpha {
				visit(append(events[:len(events):len(events)], e))
			}
		}
	}
	for _, e := range alpha {
		visit([]E{e})
	}
	return checked
}
