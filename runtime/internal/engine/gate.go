package engine

import (
	"context"
	"errors"
	"strconv"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/gate"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/prepare"
)

// The terminal gate is package gate: its vocabulary, the run's gate state,
// the decisions at the would-stop point and a model gate's question. What
// stays here is the agent's side: the gate of runs started afterwards, the
// engine's model gate (its route is an InlineRoute), and the resolution of
// its route, which needs the agent's catalog and credentials.

// SetTerminalGate sets the terminal gate of runs started afterwards; nil
// removes it. A gate set here takes precedence over a terminal_gate of the
// operator's settings (~/.octet/settings.json or a trusted workspace's),
// which builds a ModelGate for runs of an agent without one. A *ModelGate
// is checked here: its Model and Instructions are required.
func (a *Agent) SetTerminalGate(g gate.Reviewer) error {
	if mg, ok := g.(*ModelGate); ok {
		if mg == nil {
			g = nil
		} else if err := mg.check(); err != nil {
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gate = g
	return nil
}

// ModelGate is a terminal gate that asks a model (gate.AskModel): its
// call goes to its own route, with its own instructions, under the run's
// recovery settings.
type ModelGate struct {
	// Model is the catalog id of the gate's model, as RunRequest.Model
	// (with Route: the model name of that route).
	Model string
	// Route, when set, is an inline route for the gate's calls, as
	// RunRequest.Route.
	Route *InlineRoute
	// Instructions say what a candidate must satisfy (at most 64 KiB).
	Instructions string
}

func (g *ModelGate) check() error {
	if err := policy.CheckTerminalGate("ModelGate", g.Model, g.Instructions); err != nil {
		return errors.New("runtime: " + err.Error())
	}
	return nil
}

// GateInstructions are the gate's instructions (gate.Model).
func (g *ModelGate) GateInstructions() string { return g.Instructions }

// Review asks the gate's model about the candidate. It works only with the
// context a run gave its terminal gate (else gate.ErrOutsideRun), and on
// the goroutine that called the gate's Review: its recovery events are
// the run's.
func (g *ModelGate) Review(ctx context.Context, in gate.Input) (gate.Decision, error) {
	return gate.AskModel(ctx, g, in)
}

// prepareGate picks the run's gate: the agent's, else the one the settings
// configure. A ModelGate's route is resolved now, so that a gate model
// missing from the catalog or without credentials refuses the run before
// anything ran (with the code of that refusal; the message names the gate).
// The state it returns is closed with the run, refused or not.
func (a *Agent) prepareGate(ctx context.Context, setting *policy.TerminalGate) (*gate.State, *RunError) {
	a.mu.Lock()
	g := a.gate
	a.mu.Unlock()
	if g == nil && setting != nil {
		g = &ModelGate{Model: setting.Model, Instructions: setting.Instructions}
	}
	if g == nil {
		return nil, nil
	}
	st := gate.New(g, func(ctx context.Context, m gate.Model) (*gate.Route, error) {
		r, err := a.gateRoute(ctx, m.(*ModelGate))
		if err != nil {
			return nil, err
		}
		return r, nil
	})
	if mg, ok := g.(*ModelGate); ok {
		if _, err := st.Route(ctx, mg); err != nil {
			var re *RunError
			errors.As(err, &re)
			return st, re
		}
	}
	return st, nil
}

// gateRoute resolves a model gate's route (the gate state keeps it for
// the run).
func (a *Agent) gateRoute(ctx context.Context, g *ModelGate) (*gate.Route, *RunError) {
	if err := g.check(); err != nil {
		return nil, refuse(protocol.CodeConfigInvalid, "%s", err.Error())
	}
	cfg := a.prepareConfig()
	r, err := prepare.ResolveRoute(ctx, &cfg, g.Model, g.Route)
	if err != nil {
		return nil, &RunError{Code: err.Code, Message: bound("the terminal gate's model " + strconv.Quote(textutil.Truncate(g.Model, 128)) + ": " + err.Message)}
	}
	red, key := newRedactor(r.Key, r.Headers), r.Key
	return &gate.Route{Model: r.Model, Prov: r.Prov, OutputCap: requestOutputCap(r.Model),
		Redact: func(s string) string { return scrub(red.String(s), key) }}, nil
}

// steeringPending reports whether steering waits to be delivered.
func (rc *RunControl) steeringPending() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.queue.SteeringPending()
}
