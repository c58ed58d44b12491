package steering_test

// The spec-to-code tie of the native machine: enumerate NativeMachine's
// reachable graph and require it to be the graph of tla/NativeSteering.tla
// (tla/NativeSteering.graph.json, written by tla/check.mjs --update), and
// check what the checker cannot: no state is stuck, the final phases are
// absorbing, every state can reach a final phase, and from every live
// phase the outcome can still become unknown (a disconnect is always
// possible) while no final phase ever leaves.

import (
	"os"
	"slices"
	"testing"

	"octet.dev/host/fsm/internal/graphcheck"
	"octet.dev/host/fsm/steering"
)

const nativeGraphFile = "../../tla/NativeSteering.graph.json"

type nativeSpecState struct {
	Phase string `json:"phase"`
}

func nativeKey(p steering.NativePhase) string { return graphcheck.Key(nativeSpecState{string(p)}) }

var nativeActionOf = map[steering.NativeTrigger]string{
	steering.NTrRecord:     "Record",
	steering.NTrDispatch:   "Dispatch",
	steering.NTrAccepted:   "Accepted",
	steering.NTrPending:    "Pending",
	steering.NTrSendCreate: "SendCreate",
	steering.NTrSuccessor:  "Successor",
	steering.NTrUsage:      "Usage",
	steering.NTrFailed:     "Failed",
	steering.NTrLost:       "Lost",
	steering.NTrLaterRun:   "LaterRun",
}

// wantNative is what the driver must do for each step, by the phase it
// enters (or, for LaterRun, the phase it stays in).
func wantNative(from, to steering.NativePhase, tr steering.NativeTrigger) []steering.NativeEffect {
	if tr == steering.NTrLaterRun {
		if from == steering.NUnknown {
			return []steering.NativeEffect{steering.NEffBlock}
		}
		return nil
	}
	switch to {
	case steering.NRecorded:
		return []steering.NativeEffect{steering.NEffAppendIntent}
	case steering.NDispatched:
		return []steering.NativeEffect{steering.NEffSendSteer}
	case steering.NAccepted:
		return []steering.NativeEffect{steering.NEffRecordSteerID}
	case steering.NCreated:
		return []steering.NativeEffect{steering.NEffSendCreate}
	case steering.NLinked:
		return []steering.NativeEffect{steering.NEffLink}
	case steering.NDelivered:
		return []steering.NativeEffect{steering.NEffSettle}
	case steering.NFailed:
		return []steering.NativeEffect{steering.NEffSettle, steering.NEffRequeue}
	case steering.NUnknown:
		return []steering.NativeEffect{steering.NEffUnsettled}
	}
	return nil
}

func exploreNative(t *testing.T) graphcheck.Graph {
	t.Helper()
	g := graphcheck.New("the native machine")
	start := steering.NewNative().State().Phase
	g.AddState(nativeKey(start))
	g.Initial = []string{nativeKey(start)}
	seen := map[steering.NativePhase]bool{start: true}
	queue := []steering.NativePhase{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, tr := range steering.NativeTriggers {
			m := steering.NativeFromState(steering.NativeState{Phase: p})
			in := steering.NativeInput{Trigger: tr}
			permitted := slices.Contains(m.Permitted(), tr)
			effs, err := m.Fire(in)
			effs = slices.Clone(effs)
			if !permitted {
				if err == nil || len(effs) > 0 || m.State().Phase != p {
					t.Errorf("%s: refused %s: err %v, effects %v, phase %s", p, tr, err, effs, m.State().Phase)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %s permitted but failed: %v", p, tr, err)
				continue
			}
			to := m.State().Phase
			if want := wantNative(p, to, tr); !slices.Equal(effs, want) {
				t.Errorf("%s -%s-> %s: effects %v, want %v", p, tr, to, effs, want)
			}
			g.AddState(nativeKey(to))
			g.AddEdge(nativeKey(p), nativeActionOf[tr], nativeKey(to))
			if !seen[to] {
				seen[to] = true
				queue = append(queue, to)
			}
		}
	}
	if len(seen) != len(steering.NativePhases) {
		t.Errorf("%d phases reachable, want all %d", len(seen), len(steering.NativePhases))
	}
	return g
}

func nativeFinal(k string) bool {
	for _, p := range steering.NativePhases {
		if nativeKey(p) == k {
			return p.Final()
		}
	}
	return false
}

func TestNativeGraphMatchesSpec(t *testing.T) {
	graphcheck.CheckSpecFile(t, os.ReadFile, nativeGraphFile, exploreNative(t), "NativeSteering")
}

func TestNativeNoDeadlockAndFinalAbsorbing(t *testing.T) {
	g := exploreNative(t)
	if err := graphcheck.CheckNoDeadlock(g, nativeFinal); err != nil {
		t.Error(err)
	}
	if err := graphcheck.CheckAbsorbing(g, nativeFinal); err != nil {
		t.Error(err)
	}
	if err := graphcheck.CheckReaches(g.Without("LaterRun"), nativeFinal, nil); err != nil {
		t.Errorf("final phases: %v", err)
	}
	// Only LaterRun is taken in a final phase, and only there.
	for e := range g.Edges {
		if (e.Action == "LaterRun") != nativeFinal(e.From) {
			t.Errorf("edge %v", e)
		}
	}
}

// TestNativeLostFromEveryLivePhase: after the intent is recorded, a
// disconnect or crash can happen at any point until settlement, and it
// always leaves the intent unknown (never settled, never requeued).
func TestNativeLostFromEveryLivePhase(t *testing.T) {
	for _, p := range steering.NativePhases {
		m := steering.NativeFromState(steering.NativeState{Phase: p})
		live := p != steering.NIdle && !p.Final()
		if got := slices.Contains(m.Permitted(), steering.NTrLost); got != live {
			t.Errorf("%s: Lost permitted %v, want %v", p, got, live)
		}
		if !live {
			continue
		}
		effs, err := m.Fire(steering.NativeInput{Trigger: steering.NTrLost})
		if err != nil || !slices.Equal(effs, []steering.NativeEffect{steering.NEffUnsettled}) || m.State().Phase != steering.NUnknown {
			t.Errorf("%s: Lost: %v %v -> %s", p, err, effs, m.State().Phase)
		}
		effs, err = m.Fire(steering.NativeInput{Trigger: steering.NTrLaterRun})
		if err != nil || !slices.Equal(effs, []steering.NativeEffect{steering.NEffBlock}) {
			t.Errorf("%s: later run after Lost: %v %v", p, err, effs)
		}
	}
}
