package steering

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScenarios(t *testing.T) {
	type step struct {
		in   Input
		want []Effect
	}
	fire := func(t *testing.T, m *Machine, steps []step) {
		t.Helper()
		for i, s := range steps {
			got, err := m.Fire(s.in)
			if err != nil {
				t.Fatalf("step %d %+v: %v", i, s.in, err)
			}
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(s.want, got); diff != "" {
				t.Fatalf("step %d %+v effects (-want +got):\n%s", i, s.in, diff)
			}
		}
	}
	steer := Input{Trigger: TrSteer}
	follow := Input{Trigger: TrFollowUp}
	afterTool := Input{Trigger: TrAfterTool}
	turn := Input{Trigger: TrAfterTurn}
	answered := Input{Trigger: TrAfterTurn, Answered: true}
	closeIn := Input{Trigger: TrClose}

	t.Run("nothing pending: boundaries pass, an answer completes", func(t *testing.T) {
		m := New()
		fire(t, m, []step{{afterTool, nil}, {turn, nil}, {answered, []Effect{{Kind: EffComplete}}}})
		if m.State() != (State{Phase: Closed}) {
			t.Errorf("state %+v", m.State())
		}
	})
	t.Run("steering mid-turn skips the remaining tools", func(t *testing.T) {
		m := New()
		fire(t, m, []step{{steer, nil}, {steer, nil}, {afterTool, []Effect{{Kind: EffSkipTools}, {Kind: EffDeliverSteering, N: 2}}}, {afterTool, nil}})
	})
	t.Run("steering after the tools: delivered, the run goes on", func(t *testing.T) {
		m := New()
		fire(t, m, []step{{steer, nil}, {turn, []Effect{{Kind: EffDeliverSteering, N: 1}}}})
	})
	t.Run("an answer with steering pending goes on; follow-ups wait", func(t *testing.T) {
		m := New()
		fire(t, m, []step{{follow, nil}, {steer, nil},
			{answered, []Effect{{Kind: EffDeliverSteering, N: 1}, {Kind: EffContinue}}},
			{turn, nil},
			{answered, []Effect{{Kind: EffDeliverFollowUps, N: 1}, {Kind: EffContinue}}},
			{answered, []Effect{{Kind: EffComplete}}}})
	})
	t.Run("follow-ups never at a tool boundary", func(t *testing.T) {
		m := New()
		fire(t, m, []step{{follow, nil}, {afterTool, nil}, {turn, nil}})
		if m.State().FollowUps != 1 {
			t.Errorf("state %+v", m.State())
		}
	})
	t.Run("close drops what is pending; closed takes nothing", func(t *testing.T) {
		m := New()
		fire(t, m, []step{{steer, nil}, {follow, nil}, {follow, nil}, {closeIn, []Effect{{Kind: EffDrop, N: 3}}}})
		for _, tr := range Triggers {
			if _, err := m.Fire(Input{Trigger: tr}); err == nil {
				t.Errorf("%s accepted once closed", tr)
			}
		}
		if m.State() != (State{Phase: Closed}) {
			t.Errorf("state %+v", m.State())
		}
	})
	t.Run("close with nothing pending", func(t *testing.T) {
		fire(t, New(), []step{{closeIn, nil}})
	})
}
