// Package engine is the agent runtime behind the embedding API (package
// runtime, the façade): it has package prepare turn a request into a
// prepared run (route, model, policy, protected paths, resources, media,
// tool set, session), drives it on its own goroutine (the agent loop,
// model steps under recovery, tool calls, queued and native steering,
// local and native compaction, the terminal gate, reasoning updates, Ultra
// and delegation, the Codex credential refresh, redaction) and keeps the
// session API the façade wraps. The request's types (RunRequest,
// InlineRoute, RunError, Route) are package prepare's, under the same
// names here.
//
// The façade owns the public types and converts them at its edge; nothing
// here imports it. The pure decisions live in package fsm (the run
// lifecycle, recovery, steering, the loop's step boundaries in fsm/turn);
// this package performs their effects.
// Its own types keep the names the façade gives their public twins
// (Agent, Options, RunRequest, RunControl, Session, …), so that a reader
// moving between the two finds the same words.
package engine
