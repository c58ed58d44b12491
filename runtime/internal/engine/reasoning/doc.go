// Package reasoning owns a run's reasoning decisions: the selection
// (Config) and its validation, what a route declares about reasoning
// (Route: support, reasoning updates by model and endpoint, the Ultra mode)
// and whether a change during a run is admitted, the run's State (the
// pinned baseline the requests carry and the latest reasoning update after
// it): how a run starts (the request's effort, the session's recorded
// selection, the agent's), how a pending change becomes an update message
// or a new baseline at a step boundary or at the run's end, and when
// Anthropic's thinking mode may change (BeginsAssistantTurn). It also owns
// delegation's decisions: the delegate tool, the agent's worker Manager,
// worker ids, the arguments and the authorization of a delegate call.
//
// The engine's driver keeps the effects: starting a worker run, the
// events, the RunControl's pending selection under its lock. A State sees
// its run through Env, a narrow environment the driver satisfies: the
// session (Append), the run's id, the RunControl's pending selection
// (TakeReasoning, CloseReasoning), the agent's selection (AgentReasoning,
// NoteReasoning) and the log.
package reasoning
