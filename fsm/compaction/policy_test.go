package compaction_test

import (
	"testing"

	"octet.dev/host/fsm/compaction"
)

func TestPolicyDecisions(t *testing.T) {
	p := compaction.Policy{Budget: compaction.Budget{Window: 1000, Threshold: 800, Keep: 100, Fit: 900}}
	for _, c := range []struct {
		tokens, hold int64
		due          bool
	}{{800, 0, false}, {801, 0, true}, {850, 900, false}, {901, 900, true}, {5000, 0, true}} {
		if got := p.Due(c.tokens, c.hold); got != c.due {
			t.Errorf("Due(%d, %d) = %v, want %v", c.tokens, c.hold, got, c.due)
		}
	}
	if (compaction.Policy{}).Due(1<<40, 0) {
		t.Error("no budget: due")
	}
	// The hold-off grows by keep, but never past fit.
	if got := p.HoldUntil(810); got != 900 {
		t.Errorf("HoldUntil(810) = %d, want 900 (fit)", got)
	}
	if got := p.HoldUntil(700); got != 800 {
		t.Errorf("HoldUntil(700) = %d, want 800", got)
	}
	if p.OnRefusal(false, 1000) != compaction.RefusalGoOn || p.OnRefusal(false, 1001) != compaction.RefusalEnd || p.OnRefusal(true, 10) != compaction.RefusalEnd {
		t.Error("OnRefusal")
	}
	if p.Choose(true) != compaction.KindLocal || p.Choose(false) != compaction.KindNone {
		t.Error("Choose local")
	}
	n := compaction.Policy{Native: true}
	if n.Choose(false) != compaction.KindNative || n.OnOverflow(false, false) != compaction.OverflowCompact {
		t.Error("native")
	}
	if p.OnOverflow(false, false) != compaction.OverflowStands || p.OnOverflow(false, true) != compaction.OverflowCompact ||
		p.OnOverflow(true, true) != compaction.OverflowEnd || n.OnOverflow(true, false) != compaction.OverflowEnd {
		t.Error("OnOverflow")
	}
	if !compaction.Overflowed(true, false, true) || compaction.Overflowed(false, true, true) || !compaction.Overflowed(false, true, false) || compaction.Overflowed(false, false, false) {
		t.Error("Overflowed")
	}
}

// TestHoldOffThroughMachine: a refused threshold compaction that fits
// holds off: the next step's check at the same size calls the model, and
// one past the hold-off compacts again.
func TestHoldOffThroughMachine(t *testing.T) {
	m := compaction.New(compaction.Policy{Budget: budget})
	fire := func(in compaction.Input, want ...compaction.Effect) {
		t.Helper()
		effs, err := m.Fire(in)
		if err != nil || len(effs) != len(want) {
			t.Fatalf("%+v: %v %v, want %v", in, err, effs, want)
		}
		for i := range want {
			if effs[i] != want[i] {
				t.Fatalf("%+v: %v, want %v", in, effs, want)
			}
		}
	}
	fire(compaction.Input{Trigger: compaction.TrCheck, Tokens: 850, CanPlan: true}, compaction.EffCompactLocal)
	fire(compaction.Input{Trigger: compaction.TrCompactRefused, Tokens: 850}, compaction.EffHold, compaction.EffCall)
	if h := m.State().HoldUntil; h != 900 {
		t.Fatalf("hold until %d", h)
	}
	fire(compaction.Input{Trigger: compaction.TrTools})
	fire(compaction.Input{Trigger: compaction.TrCheck, Tokens: 880, CanPlan: true}, compaction.EffCall)
	fire(compaction.Input{Trigger: compaction.TrTools})
	fire(compaction.Input{Trigger: compaction.TrCheck, Tokens: 950, CanPlan: true}, compaction.EffCompactLocal)
	fire(compaction.Input{Trigger: compaction.TrCompactRefused, Tokens: 1100}, compaction.EffOverflow)
	if st := m.State(); st.Phase != compaction.PDone || st.Status != compaction.StatusError {
		t.Fatalf("%+v", st)
	}
}

func TestBudgetOf(t *testing.T) {
	for _, c := range []struct {
		window, out int64
		want        compaction.Budget
		reserve     int64
	}{
		{0, 4096, compaction.Budget{}, 0},
		{200000, 0, compaction.Budget{Window: 200000, Threshold: 200000 - 16384, Keep: 20000, Fit: 200000 - 16384}, 16384},
		{200000, 32000, compaction.Budget{Window: 200000, Threshold: 168000, Keep: 20000, Fit: 168000}, 32000},
		{200000, 4096, compaction.Budget{Window: 200000, Threshold: 200000 - 16384, Keep: 20000, Fit: 200000 - 4096}, 16384},
		{8000, 1000, compaction.Budget{Window: 8000, Threshold: 6000, Keep: 2000, Fit: 7000}, 2000},
	} {
		b, r := compaction.BudgetOf(c.window, c.out)
		if b != c.want || r != c.reserve {
			t.Errorf("BudgetOf(%d, %d) = %+v, %d; want %+v, %d", c.window, c.out, b, r, c.want, c.reserve)
		}
	}
}
