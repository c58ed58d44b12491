package soak

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

// modes are the wire modes the runs take in turn.
var modes = []fakeprovider.Mode{fakeprovider.ModeChat, fakeprovider.ModeResponses, fakeprovider.ModeAnthropic}

// faultKind is one entry of the fault menu, with its relative weight.
type faultKind struct {
	name   string
	weight int
	make   func(r *rand.Rand, idleMS int) fakeprovider.Fault
}

// faultMenu is what a faulted run may get. Every fault here is one the
// host recovers from by retrying (or waiting), except the 400, which ends
// the run with an error; the costly ones (an idle timeout, a network wait)
// are rare so that a soak stays short on a busy machine.
var faultMenu = []faultKind{
	{"status_500", 12, func(r *rand.Rand, _ int) fakeprovider.Fault {
		// retry-after-ms keeps the retry fast (the host honours it).
		return fakeprovider.FaultStatus{Code: 500, RetryAfterMS: "5"}
	}},
	{"status_502", 6, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultStatus{Code: 502, RetryAfterMS: "5"}
	}},
	{"status_503", 6, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultStatus{Code: 503, RetryAfterMS: "5"}
	}},
	{"status_429", 8, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultStatus{Code: 429, RetryAfterMS: "10"}
	}},
	{"status_529", 3, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultStatus{Code: 529, RetryAfterMS: "5"}
	}},
	{"status_400", 2, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultStatus{Code: 400}
	}},
	{"cut_mid_stream", 8, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultCutMidStream{AfterEvents: 1 + r.IntN(6), Graceful: r.IntN(2) == 0}
	}},
	{"reset_after_headers", 3, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultResetAfterHeaders{}
	}},
	{"error_event", 6, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultErrorEvent{AfterEvents: 1 + r.IntN(5)}
	}},
	// A slow stream: a pause shorter than the idle timeout, then the rest.
	{"slow_stream", 10, func(r *rand.Rand, idleMS int) fakeprovider.Fault {
		return fakeprovider.FaultStall{AfterEvents: 1 + r.IntN(5), For: time.Duration(idleMS/5) * time.Millisecond}
	}},
	{"stall_past_idle", 1, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultStall{AfterEvents: 1 + r.IntN(4)}
	}},
	{"no_headers", 1, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultNoHeaders{}
	}},
	{"refuse", 1, func(r *rand.Rand, _ int) fakeprovider.Fault {
		return fakeprovider.FaultRefuse{For: 50 * time.Millisecond}
	}},
}

// pickFault draws a fault from the menu.
func pickFault(r *rand.Rand, idleMS int) (string, fakeprovider.Fault) {
	total := 0
	for _, k := range faultMenu {
		total += k.weight
	}
	n := r.IntN(total)
	for _, k := range faultMenu {
		if n < k.weight {
			return k.name, k.make(r, idleMS)
		}
		n -= k.weight
	}
	panic("unreachable")
}

// runPlan is what one run asks for and what the fake answers it with.
type runPlan struct {
	index  int
	mode   fakeprovider.Mode
	turns  []fakeprovider.Turn // tool turns, then the answer
	answer string              // the answer turn's text: the run's output when it completes
	faults []string            // names of the faults injected when the run was sent
}

// words is the vocabulary of the fake answers.
var words = strings.Fields("the soak keeps one host busy with many runs and checks every event it writes for order and completeness")

// planRun draws the turns of run i: sometimes reasoning, sometimes one or
// two rounds of tool calls (read, ls, grep, find, a path outside the
// workspace the policy denies, a tool that does not exist), always an
// answer naming the run, streamed in pieces of a random size.
func planRun(r *rand.Rand, i int, toolRate float64) runPlan {
	p := runPlan{index: i, mode: modes[i%len(modes)]}
	if r.Float64() < toolRate {
		rounds := 1 + r.IntN(2)
		for round := range rounds {
			var calls []fakeprovider.ToolCall
			for c := range 1 + r.IntN(2) {
				id := fmt.Sprintf("call_%d_%d_%d", i, round, c)
				calls = append(calls, toolCall(r, id))
			}
			t := fakeprovider.Turn{ToolCalls: calls, Usage: fakeprovider.Usage{Input: 50 + r.IntN(50), Output: 10}}
			if r.IntN(3) == 0 {
				t.Text = "Let me look."
			}
			p.turns = append(p.turns, t)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "soak answer %d:", i)
	for range 5 + r.IntN(40) {
		b.WriteString(" " + words[r.IntN(len(words))])
	}
	b.WriteString(" ✓")
	p.answer = b.String()
	ans := fakeprovider.Turn{Text: p.answer, Usage: fakeprovider.Usage{Input: 80 + r.IntN(100), Output: 20 + r.IntN(40)}}
	switch r.IntN(4) {
	case 0:
		ans.Chunk = 1 + r.IntN(4) // many small deltas
	case 1:
		ans.Chunk = -1 // one delta
	}
	if r.IntN(4) == 0 {
		ans.Reasoning = "Thinking about run " + fmt.Sprint(i) + "."
	}
	p.turns = append(p.turns, ans)
	return p
}

func toolCall(r *rand.Rand, id string) fakeprovider.ToolCall {
	switch r.IntN(7) {
	case 0:
		return fakeprovider.ToolCall{ID: id, Name: "ls", Arguments: `{"path":"."}`}
	case 1:
		return fakeprovider.ToolCall{ID: id, Name: "grep", Arguments: `{"pattern":"soak","path":"."}`}
	case 2:
		return fakeprovider.ToolCall{ID: id, Name: "find", Arguments: `{"pattern":"*.txt"}`}
	case 3:
		// Outside the workspace: the policy denies it.
		return fakeprovider.ToolCall{ID: id, Name: "read", Arguments: `{"path":"../../etc/passwd"}`}
	case 4:
		// A tool nobody registered: unknown_tool, and the run goes on.
		return fakeprovider.ToolCall{ID: id, Name: "no_such_tool", Arguments: `{}`}
	default:
		return fakeprovider.ToolCall{ID: id, Name: "read", Arguments: `{"path":"notes.txt"}`}
	}
}
