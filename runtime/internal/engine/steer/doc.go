// Package steer owns a run's steering (CONTRACT §15): the queue of
// steering messages and follow-ups the application adds to a running run
// (Queue, fsm/steering's Machine deciding each boundary) and its effects
// (Deliver, SkipTools), and native steering on a qualified route (Native:
// every intent settled by its own fsm/steering NativeMachine, the
// successor linking, the outcomes read after a call; Gate: RunControl's
// side, which hands the run's state between the application's goroutine
// and the run's).
//
// Its environment is narrow. The run it serves is seen through Recorder
// (append session records, emit a streaming event, the run's id) and Env
// (that, plus marking the run's usage uncertain and handing an input back
// to the ordinary queue); the Gate through Requeuer; the check before a
// run through Intents (the session's unsettled native intents). The
// engine's driver and RunControl satisfy them; Queue does no locking of
// its own: RunControl's mutex guards it.
package steer
