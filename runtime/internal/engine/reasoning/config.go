package reasoning

import (
	"errors"
	"fmt"

	"octet.dev/host/runtime/internal/catalog"
)

// Config selects the reasoning effort: "" (the route's default), "low",
// "medium" or "high".
//
// Ultra selects the Ultra mode: the effort (Effort, "high" when "") becomes
// a new request baseline instead of a reasoning update, superseding the
// updates before it, and selecting it installs the agent's delegation
// manager, which gives the model the delegate tool and stays installed
// when a later selection leaves Ultra.
type Config struct {
	Effort string
	Ultra  bool
}

// Valid reports whether c names a known effort.
func (c Config) Valid() bool {
	switch c.Effort {
	case "", "low", "medium", "high":
		return true
	}
	return false
}

// Normalized returns c with Ultra's default effort filled in.
func (c Config) Normalized() Config {
	if c.Ultra && c.Effort == "" {
		c.Effort = "high"
	}
	return c
}

// Reasoning errors.
var (
	ErrInvalid     = errors.New("runtime: reasoning effort must be \"\", \"low\", \"medium\" or \"high\"")
	ErrUnsupported = errors.New("runtime: the run's route does not support reasoning")
	// ErrNotQualified: the run's route is not qualified for a reasoning
	// change during a run: its model and its endpoint must both declare
	// reasoning updates. The wrapping error says which does not.
	ErrNotQualified = errors.New("runtime: the run's route is not qualified for reasoning changes during a run")
	// ErrUltraUnsupported: the run's route does not declare the Ultra mode
	// ("reasoning_ultra": true in ~/.octet/models.json).
	ErrUltraUnsupported = errors.New("runtime: the run's route does not support the Ultra reasoning mode (reasoning_ultra in ~/.octet/models.json)")
	// ErrObserverRequired: the Ultra mode needs an observation hook to
	// report the events of the run and its workers.
	ErrObserverRequired = errors.New("runtime: the Ultra reasoning mode needs an observer (Agent.SetObserver)")
)

// Route is what a run's route declares about reasoning.
type Route struct {
	Model    string // the model's catalog id, named by errors
	Endpoint string // the endpoint's name (its provider), named by errors
	// Supports: the model produces reasoning and takes an effort.
	Supports bool
	// ModelUpdates and EndpointUpdates: the model, and the endpoint that
	// serves it, declare reasoning updates; a change during a run needs
	// both (Updates).
	ModelUpdates, EndpointUpdates bool
	// Ultra: the model declares the Ultra mode.
	Ultra bool
	// Anthropic: the route speaks Anthropic Messages, whose thinking mode
	// changes only where a new assistant turn begins (Admits).
	Anthropic bool
}

// RouteOf returns what m declares about reasoning. Inline routes never
// declare reasoning updates.
func RouteOf(m catalog.Model) Route {
	return Route{Model: m.ID, Endpoint: m.Provider, Supports: m.SupportsReasoning,
		ModelUpdates: m.ReasoningUpdates && !m.Inline, EndpointUpdates: m.EndpointReasoningUpdates && !m.Inline,
		Ultra: m.ReasoningUltra, Anthropic: m.Mode == catalog.ModeAnthropicMessages}
}

// Updates reports whether the route is qualified for reasoning changes
// during a run: by its model and by its endpoint.
func (r Route) Updates() bool { return r.ModelUpdates && r.EndpointUpdates }

// Qualified returns nil when the route is qualified for reasoning changes
// during a run, else ErrNotQualified wrapped in a message that names what
// does not declare them: the model, the endpoint, or both.
func (r Route) Qualified() error {
	switch {
	case r.Updates():
		return nil
	case !r.ModelUpdates && !r.EndpointUpdates:
		return fmt.Errorf("%w: neither the model %q nor the endpoint %q declares reasoning_updates", ErrNotQualified, r.Model, r.Endpoint)
	case !r.ModelUpdates:
		return fmt.Errorf("%w: the model %q does not declare reasoning_updates", ErrNotQualified, r.Model)
	}
	return fmt.Errorf("%w: the endpoint %q does not declare reasoning_updates", ErrNotQualified, r.Endpoint)
}

// Admit checks a change of the running run's reasoning to c, in the order
// the errors are documented in: c is valid, the route supports reasoning,
// is qualified for changes during a run, and for Ultra declares it, with
// an observer (observed). A nil error admits nothing yet: the RunControl
// still refuses a change once the run is ending.
func (r Route) Admit(c Config, observed func() bool) error {
	if !c.Valid() {
		return ErrInvalid
	}
	if !r.Supports {
		return fmt.Errorf("%w (%s)", ErrUnsupported, r.Model)
	}
	if err := r.Qualified(); err != nil {
		return err
	}
	if c.Ultra {
		if !r.Ultra {
			return fmt.Errorf("%w (%s)", ErrUltraUnsupported, r.Model)
		}
		if !observed() {
			return ErrObserverRequired
		}
	}
	return nil
}
