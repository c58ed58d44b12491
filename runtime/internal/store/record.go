package store

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
)

// SchemaVersion is the session file schema this package writes and loads.
const SchemaVersion = 1

// Record types, the "type" member of each line.
const (
	TypeSession          = "session" // the header, line 1 only
	TypeMessage          = "message"
	TypeModelChange      = "model_change"
	TypeUsage            = "usage"
	TypeUsageUncertainty = "usage_uncertainty"
	TypeReasoningChange  = "reasoning_change"
	TypeCompaction       = "compaction"
	TypeRunStart         = "run_start"
	TypeRunEnd           = "run_end"
	TypeCheckout         = "checkout"
	TypeFork             = "fork"
)

// Header is the first line of a session file:
//
//	{"type":"session","schema_version":1,"id":"customer-42","created_at":"2026-01-02T03:04:05.123456789Z"}
//
// It holds no workspace path: a session is found by its ID, and the file
// stays free of absolute paths.
type Header struct {
	SchemaVersion int       `json:"schema_version"`
	ID            string    `json:"id"`
	CreatedAt     time.Time `json:"created_at"`
}

// Record is one line after the header: the envelope members "type" and "ts"
// followed by the members of Body.
type Record struct {
	// TS is when the record was appended. Append fills a zero TS from the
	// session clock; TS is stored in UTC with nanoseconds.
	TS time.Time
	// Body is the type-specific content: one of Message, ModelChange, Usage,
	// UsageUncertainty, ReasoningChange, Compaction, RunStart, RunEnd,
	// Checkout, Fork, or Unknown for a type this build does not know.
	Body Body
}

// Type returns the record's "type" member, or "" when Body is nil.
func (r Record) Type() string {
	if r.Body == nil {
		return ""
	}
	return r.Body.RecordType()
}

// Body is the type-specific content of a Record. The set of bodies is closed:
// only this package implements it.
type Body interface {
	// RecordType returns the "type" member the body is stored under.
	RecordType() string
	isBody()
}

// Message is a conversation entry:
//
//	{"type":"message","ts":…,"run_id":"run-1","message":{"role":"user","text":"hi"}}
type Message struct {
	// RunID is the run that produced the message; empty for seeded history.
	RunID string `json:"run_id,omitempty"`
	// Origin marks a user message the application queued during the run:
	// "steering" or "follow_up"; empty otherwise.
	Origin string `json:"origin,omitempty"`
	// Message is the conversation message, in its record form (format.go;
	// NewMessageV1 and MessageV1.Provider convert it).
	Message MessageV1 `json:"message"`
}

// ModelChange records a switch of model or route.
type ModelChange struct {
	Model        string `json:"model"`
	Provider     string `json:"provider,omitempty"`
	ProviderMode string `json:"provider_mode,omitempty"`
}

// Usage is one provider call's entry in the durable usage ledger. It is
// never dropped by compaction nor by a checkout: session statistics sum
// every Usage record of the file.
type Usage struct {
	RunID string `json:"run_id,omitempty"`
	Step  int    `json:"step"`
	// Operation names an auxiliary operation's call (local_compaction,
	// native_compaction, terminal_gate: the operation names of
	// usage_uncertainty records); it is empty for a model step's
	// assistant turn.
	Operation string  `json:"operation,omitempty"`
	Model     string  `json:"model,omitempty"`
	Usage     UsageV1 `json:"usage"`
	// CostUSD is the priced cost of the call in US dollars, 0 when unknown.
	CostUSD float64 `json:"cost_usd,omitempty"`
	// Discarded marks a billed call whose answer was thrown away (a
	// silent context overflow, compacted and re-issued): it counts in the
	// totals, never as the context's size.
	Discarded bool `json:"discarded,omitempty"`
}

// UsageUncertainty records a failed attempt that may have been billed while
// its usage is unknown (CONTRACT §12). It is stored exactly as
//
//	{"type":"usage_uncertainty","ts":…,"record":{"endpoint":"codex","model":"openai/gpt-5.4","operation":"assistant_turn"}}
//
// and carries no tokens or cost. Its presence makes the session's usage
// uncertain for good.
type UsageUncertainty struct {
	Endpoint  string `json:"endpoint"`
	Model     string `json:"model"`
	Operation string `json:"operation"`
}

// ReasoningChange records a change of the reasoning baseline: the effort
// requests carry ("" is the route's default). It supersedes the reasoning
// updates before it (a Message whose MessageV1 has
// ReasoningEffort), which stay in the conversation. Ultra marks a baseline
// the Ultra mode established.
type ReasoningChange struct {
	Effort string `json:"effort"`
	Ultra  bool   `json:"ultra,omitempty"`
}

// Compaction is a checkpoint of compaction: the conversation continues
// from Summary (the handoff, wrapped by WrapSummary into one user message)
// followed by the message records from FirstKept on. Only the newest
// checkpoint applies. It is stored as
//
//	{"type":"compaction","ts":…,"kind":"local","reason":"threshold","summary":"## Goal…","read_files":["a.go"],"modified_files":["b.go"],"first_kept":12,"tokens_before":24100,"tokens_after_estimate":5200,"usage":{…}}
//
// A torn checkpoint line (a crash mid-append) is ignored on load like any
// torn last line: the session then continues from the checkpoint before.
type Compaction struct {
	// Kind is "local" (a summarizer call) or "native" (the provider's
	// compaction endpoint); empty in files of older builds.
	Kind string `json:"kind,omitempty"`
	// Reason is "threshold" or "overflow".
	Reason string `json:"reason,omitempty"`
	// Summary is the handoff: the model's summary, right-trimmed, followed
	// by the host's file evidence blocks.
	Summary string `json:"summary"`
	// SummaryText is the model's summary alone (the handoff without the
	// evidence), fed to the next compaction as the previous summary.
	SummaryText string `json:"summary_text,omitempty"`
	// ReadFiles and ModifiedFiles are the cumulative file evidence:
	// workspace-relative paths, sorted, de-duplicated.
	ReadFiles     []string `json:"read_files,omitempty"`
	ModifiedFiles []string `json:"modified_files,omitempty"`
	// FirstKept is the 0-based index, among all message records of the
	// session counted from the start of the file, of the first message kept
	// verbatim. It is at most the number of message records before the
	// checkpoint.
	FirstKept int `json:"first_kept"`
	// TokensBefore is the context size that led to the compaction, and
	// TokensAfterEstimate the estimate of the rebuilt context.
	TokensBefore        int64 `json:"tokens_before,omitempty"`
	TokensAfterEstimate int64 `json:"tokens_after_estimate,omitempty"`
	// Usage is the summarizer calls' usage, summed (each call also has
	// its own usage record in the ledger).
	Usage *UsageV1 `json:"usage,omitempty"`
	// Items, in a native checkpoint, are the provider's replacement
	// history exactly as its compaction endpoint returned it (a JSON
	// array of opaque items), and Route the route that produced them: the
	// checkpoint applies only on that route (MessagesFor). A native
	// checkpoint has no Summary; FirstKept is the number of message
	// records before it (the items replace them all). Only nil Items are
	// left out of the line: an empty array is stored as [] and loads back
	// as the native checkpoint it is.
	Items jsontext.Value `json:"items,omitzero"`
	Route string         `json:"route,omitempty"`
}

// SummaryPrefix and SummarySuffix wrap a checkpoint's handoff into the
// user message that stands for the compacted history.
const (
	SummaryPrefix = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
	SummarySuffix = "\n</summary>"
)

// WrapSummary returns the user message text a checkpoint's handoff
// becomes in the rebuilt conversation.
func WrapSummary(handoff string) string { return SummaryPrefix + handoff + SummarySuffix }

// RunStart marks the start of a run.
type RunStart struct {
	RunID string `json:"run_id"`
	// DisplayText is presentation metadata for the prompt (the protocol's
	// display_text); the model never sees it.
	DisplayText string `json:"display_text,omitempty"`
}

// RunEnd marks the end of a run with its final status (completed, blocked
// or error) and, unless it completed, its error code. A run whose final
// events its consumer could not deliver (an event replaced by
// output_too_large, a failed output) gets a second RunEnd after the first,
// with status error and that code: the later record of a run supersedes
// the earlier (Session.RunEnds).
type RunEnd struct {
	RunID  string        `json:"run_id"`
	Status string        `json:"status"`
	Code   protocol.Code `json:"code,omitempty"`
}

// Checkout moves the session's head back to an earlier entry:
//
//	{"type":"checkout","ts":…,"entry":12}
//
// Entry is an entry ID (Session.Entries): the 1-based sequence number, in
// the file, of a message or compaction record before the checkout, or 0 for
// the start of the session (an empty conversation). The conversation then
// is the one that ended at that entry, and the records appended after the
// checkout continue it; the records of the abandoned branch stay in the
// file (their usage stays in the ledger) and their entry IDs stay valid
// checkout targets.
type Checkout struct {
	Entry int `json:"entry"`
}

// Fork is the first record of a session forked from another:
//
//	{"type":"fork","ts":…,"parent_id":"s1","parent_entry":12}
//
// ParentEntry is the parent's head when it was forked (0: the parent's
// start). The records after it copy the parent's conversation up to that
// head; the parent's usage and usage_uncertainty records are not copied,
// so the fork's ledger starts at zero and its usage starts certain.
type Fork struct {
	ParentID    string `json:"parent_id"`
	ParentEntry int    `json:"parent_entry"`
}

// Unknown is a record whose type this build does not know, kept so that
// files written by newer builds still load. The conversation and the helpers
// ignore it. Append refuses it.
type Unknown struct {
	Type string
	// Raw is the whole line, without its newline.
	Raw jsontext.Value
}

// RecordType implements Body.
func (Message) RecordType() string { return TypeMessage }

// RecordType implements Body.
func (ModelChange) RecordType() string { return TypeModelChange }

// RecordType implements Body.
func (Usage) RecordType() string { return TypeUsage }

// RecordType implements Body.
func (UsageUncertainty) RecordType() string { return TypeUsageUncertainty }

// RecordType implements Body.
func (ReasoningChange) RecordType() string { return TypeReasoningChange }

// RecordType implements Body.
func (Compaction) RecordType() string { return TypeCompaction }

// RecordType implements Body.
func (RunStart) RecordType() string { return TypeRunStart }

// RecordType implements Body.
func (RunEnd) RecordType() string { return TypeRunEnd }

// RecordType implements Body.
func (Checkout) RecordType() string { return TypeCheckout }

// RecordType implements Body.
func (Fork) RecordType() string { return TypeFork }

// RecordType implements Body.
func (u Unknown) RecordType() string { return u.Type }

func (Message) isBody()          {}
func (ModelChange) isBody()      {}
func (Usage) isBody()            {}
func (UsageUncertainty) isBody() {}
func (ReasoningChange) isBody()  {}
func (Compaction) isBody()       {}
func (RunStart) isBody()         {}
func (RunEnd) isBody()           {}
func (Checkout) isBody()         {}
func (Fork) isBody()             {}
func (Unknown) isBody()          {}

var (
	_ Body = Message{}
	_ Body = ModelChange{}
	_ Body = Usage{}
	_ Body = UsageUncertainty{}
	_ Body = ReasoningChange{}
	_ Body = Compaction{}
	_ Body = RunStart{}
	_ Body = RunEnd{}
	_ Body = Checkout{}
	_ Body = Fork{}
	_ Body = Unknown{}
)
