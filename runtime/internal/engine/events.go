package engine

import "octet.dev/host/protocol"

// Event is one event of a run's ordered stream (protocol.RunEvent).
type Event = protocol.RunEvent
