package compaction

// Budget is a run's token budget, as the engine computes it from the
// route's model (a zero Window: no budget, no threshold compaction).
type Budget struct {
	Window    int64 // the context window
	Threshold int64 // a context over it is compacted before the call
	Keep      int64 // the newest tokens a compaction keeps verbatim
	Fit       int64 // the largest context whose request still leaves max_output_tokens of the window
}

// On reports whether the route has a window to budget.
func (b Budget) On() bool { return b.Window > 0 }

// Kind is how a compaction runs.
type Kind string

// Kinds of compaction; None: nothing can be compacted.
const (
	KindNone   Kind = "none"
	KindLocal  Kind = "local"  // the summarizer on the run's route
	KindNative Kind = "native" // the route's compaction endpoint
)

// Policy is the compaction decisions of one run: its budget and whether
// its route compacts natively. Every method is pure and allocates nothing.
type Policy struct {
	Budget Budget
	Native bool // the route has a compaction endpoint
}

// Due reports whether the threshold check must compact a context of
// tokens, holdUntil being the hold-off a refused compaction left (0:
// none): the budget is on and tokens is over both.
func (p Policy) Due(tokens, holdUntil int64) bool {
	return p.Budget.On() && tokens > p.Budget.Threshold && tokens > holdUntil
}

// HoldUntil is the hold-off after a threshold compaction of a context of
// tokens was refused: the next attempt waits until the context has grown
// by Keep, so that a summarizer that keeps refusing is not called on every
// step, but never past Fit, so that a request that would no longer leave
// max_output_tokens of the window tries again first.
func (p Policy) HoldUntil(tokens int64) int64 {
	return min(tokens+p.Budget.Keep, p.Budget.Fit)
}

// Fits reports whether the run may go on uncompacted after its threshold
// compaction of a context of tokens was refused: while it still fits the
// window. Otherwise the run ends with context_overflow.
func (p Policy) Fits(tokens int64) bool { return tokens <= p.Budget.Window }

// Choose is the compaction to run: native when the route has an endpoint,
// else local when there is something to summarize (canPlan: something
// lies before the newest Keep tokens), else none.
func (p Policy) Choose(canPlan bool) Kind {
	switch {
	case p.Native:
		return KindNative
	case canPlan:
		return KindLocal
	}
	return KindNone
}

// Overflowed reports whether a step overflowed: its call failed with an
// overflow code (failed), or it succeeded but stopped for the window or its
// input passed the window (silent). A silent overflow of a native-steered
// step (nativeBusy) does not count: such a step cannot be re-issued (the
// successor was created by the server), so its outcome stands.
func Overflowed(failed, silent, nativeBusy bool) bool {
	return failed || silent && !nativeBusy
}

// OverflowDecision is what an overflowed step leads to.
type OverflowDecision int

// Overflow decisions.
const (
	// OverflowStands: nothing can be compacted (local, nothing before the
	// newest Keep tokens) in a step that has not compacted: the outcome
	// stands as the provider reported it.
	OverflowStands OverflowDecision = iota
	// OverflowCompact: compact (reason overflow), then re-issue the step.
	OverflowCompact
	// OverflowEnd: the step already compacted for an overflow: the run
	// ends with context_overflow.
	OverflowEnd
)

// OnOverflow decides an overflowed step: compacted says the step already
// compacted for an overflow (one overflow compaction per step).
func (p Policy) OnOverflow(compacted, canPlan bool) OverflowDecision {
	switch {
	case compacted:
		return OverflowEnd
	case p.Choose(canPlan) == KindNone:
		return OverflowStands
	}
	return OverflowCompact
}

// RefusalDecision is what a refused (or failed, or canceled) compaction
// leads to; a checkpoint is written only by a successful one.
type RefusalDecision int

// Refusal decisions.
const (
	// RefusalGoOn: a threshold compaction was refused but the context
	// still fits: hold off (HoldUntil) and call the model uncompacted.
	RefusalGoOn RefusalDecision = iota
	// RefusalEnd: the run ends with context_overflow (an overflow
	// compaction was refused, or the context no longer fits the window).
	RefusalEnd
)

// OnRefusal decides a refused compaction of a context of tokens; overflow
// says it was an overflow compaction.
func (p Policy) OnRefusal(overflow bool, tokens int64) RefusalDecision {
	if !overflow && p.Fits(tokens) {
		return RefusalGoOn
	}
	return RefusalEnd
}

// Caps of a budget: the reserve for the answer is at most ReserveCap
// (unless the model's max_output_tokens is larger), and a compaction keeps
// at most KeepCap of the newest tokens verbatim.
const (
	ReserveCap = 16384
	KeepCap    = 20000
)

// BudgetOf is the budget of a route whose model has a context window of
// window tokens (0 or less: no budget) and answers with at most
// maxOutput tokens (0: not declared). The threshold leaves a reserve for
// the answer: maxOutput, but at least min(ReserveCap, window/4). A
// compaction keeps min(KeepCap, window/4). Fit leaves exactly maxOutput
// of the window when it is declared, else the reserve. reserve is the
// reserve the threshold leaves.
func BudgetOf(window, maxOutput int64) (b Budget, reserve int64) {
	if window <= 0 {
		return Budget{}, 0
	}
	reserve = max(maxOutput, min(ReserveCap, window/4))
	fit := window - reserve
	if maxOutput > 0 {
		fit = window - min(maxOutput, window)
	}
	return Budget{Window: window, Threshold: window - reserve, Keep: min(KeepCap, window/4), Fit: fit}, reserve
}
