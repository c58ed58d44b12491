// Package compact is compaction inside a run (CONTRACT §17): the context
// budget and the running size of the context, the threshold check before
// each model call, local compaction (the plan of what is summarized and
// what is kept verbatim, the summarizer's calls, the handoff with its file
// evidence, the checkpoint), native compaction (the route's compaction
// endpoint, whose opaque items become the checkpoint) and overflow
// recovery (a step the provider refuses as too long, or that overflowed
// silently, is compacted once and re-issued).
//
// The Compactor owns this state and these methods; its decisions come from
// the pure machine fsm/compaction.Machine (tla/Compaction.tla), which it
// drives: the threshold check, the compaction's outcome, an overflow and
// the run's end fire the machine's triggers, and its effects say whether
// to compact (locally or natively), call, re-issue, hold off or end the
// run with context_overflow. Its transitions go to the run's tracer.
//
// The Compactor sees the run through Env, which the engine's driver
// satisfies: events, session records and reads (the route's conversation,
// its latest checkpoint and record ordinals), the model call and auxiliary
// operations under the recovery machine, the auxiliary usage ledger, the
// discarded answer of a silent overflow, redaction. It never sees the
// driver itself.
package compact
