package protocol

// Payload is the data of a run event (RunEvent.Data): a pointer to one of
// the payload types of the registry (*ModelDelta for model_delta), or to a
// type that embeds GoAPIEvent. The interface is sealed: only this package's
// payload types, and types embedding GoAPIEvent, implement it.
type Payload interface {
	isPayload()
}

// GoAPIEvent is embedded only by payloads of events that the Go embedding
// API delivers and protocol 1 has no frame for (the runtime's
// RecoveredOutput). It has no members and is left out of the JSON encoding
// of the embedding type; embed it as
//
//	protocol.GoAPIEvent `json:"-"`
type GoAPIEvent struct{}

func (*GoAPIEvent) isPayload() {}

func (*Hello) isPayload()                     {}
func (*Models) isPayload()                    {}
func (*Empty) isPayload()                     {}
func (*ErrorData) isPayload()                 {}
func (*Accepted) isPayload()                  {}
func (*Started) isPayload()                   {}
func (*Settled) isPayload()                   {}
func (*FinalResult) isPayload()               {}
func (*ModelDelta) isPayload()                {}
func (*OutputMedia) isPayload()               {}
func (*ProviderLifecycle) isPayload()         {}
func (*ProviderRetry) isPayload()             {}
func (*ProviderWaitingForNetwork) isPayload() {}
func (*ProviderOperationRetry) isPayload()    {}
func (*ProviderUsageUncertain) isPayload()    {}
func (*CandidateRejected) isPayload()         {}
func (*ToolStart) isPayload()                 {}
func (*ToolPolicy) isPayload()                {}
func (*ToolProgress) isPayload()              {}
func (*ToolFinish) isPayload()                {}
func (*ModelStep) isPayload()                 {}
func (*SteeringDelivered) isPayload()         {}
func (*FollowUpDelivered) isPayload()         {}
func (*CompactionStart) isPayload()           {}
func (*CompactionFinish) isPayload()          {}
func (*ExtensionNotification) isPayload()     {}
