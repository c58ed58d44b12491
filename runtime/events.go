package runtime

// Event is one event of a run's ordered stream. Type is a run event type
// of package protocol (protocol.TypeAccepted … protocol.TypeFinalResult,
// or the Go-only protocol.TypeRecoveredOutput); Data is a pointer to its
// payload type, the type protocol.PayloadFor(Type) returns (*protocol.ModelDelta
// for model_delta), whose JSON encoding is the event's data object.
type Event struct {
	Type string
	Data any
}
