package engine

// Observation is one event of a run, as the observer receives it: the
// run's id, and for a worker run (delegation.go) the id of the run that
// delegated to it.
type Observation struct {
	RunID string
	// Parent is the delegating run's id for a worker's event, "" for a run
	// the application started.
	Parent string
	Event  Event
}

// observerHook holds the installed observer.
type observerHook struct{ fn func(Observation) }

// SetObserver installs fn, which receives every event of every run started
// afterwards and of their worker runs, in each run's order, before the
// run's consumer gets it; nil removes it. fn runs on the run's goroutine:
// it must not block, and must not call into the run (a slow observer slows
// the run). The Ultra reasoning mode needs an observer: removing it does
// not leave Ultra, but Ultra cannot be selected again without one.
func (a *Agent) SetObserver(fn func(Observation)) {
	if fn == nil {
		a.observer.Store(nil)
		return
	}
	a.observer.Store(&observerHook{fn: fn})
}

func (a *Agent) observed() bool { return a.observer.Load() != nil }

// observe hands ev to the observer, if one is installed.
func (d *driver) observe(ev Event) {
	if h := d.a.observer.Load(); h != nil {
		h.fn(Observation{RunID: d.p.req.RunID, Parent: d.parent, Event: ev})
	}
}
