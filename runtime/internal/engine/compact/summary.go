package compact

import (
	"context"
	"errors"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/provider"
)

// The summarizer of local compaction: its calls, their usage records and
// its input.

// summaryWriteError is a summarizer call whose usage could not be
// recorded.
type summaryWriteError struct{ err error }

func (e *summaryWriteError) Error() string {
	return "the usage record could not be written: " + e.err.Error()
}

// summarize makes one summarizer call, as the auxiliary operation
// local_compaction under the recovery loop: transient failures are
// retried (provider_operation_retry), an overflowing request drops its
// oldest transcript item and goes again (at most maxSummarizerTrims
// times). Each call's usage goes to the session's ledger, tagged with its
// operation, and is added to sum.
func (c *Compactor) summarize(ctx context.Context, step int, items []string, prev, instruction string, maxOut int, sum *provider.Usage) (string, error) {
	if limit := c.cfg.OutputCap; limit == 0 {
		maxOut = 0 // a route that takes no output cap (the Codex backend)
	} else {
		maxOut = max(min(maxOut, limit), 1)
	}
	for trims := 0; ; trims++ {
		req := provider.Request{
			Model: c.cfg.APIModel, System: summarizerSystem,
			Messages:        []provider.Message{{Role: provider.RoleUser, Text: summarizerInput(items, prev, instruction), NewTurn: true}},
			MaxOutputTokens: maxOut, MaxOutputBytes: provider.OutputLimit(maxOut),
		}
		res, err := modelcall.Recover(ctx, c.env, modelcall.Operation[summaryAttempt]{
			Name: protocol.OperationLocalCompaction,
			Call: func(ctx context.Context) (summaryAttempt, error) { return c.callSummarizer(ctx, req) },
		})
		if err != nil {
			var tf *modelcall.Failed
			if errors.As(err, &tf) && IsOverflowCode(tf.Code) && trims < maxSummarizerTrims && len(items) > 1 && ctx.Err() == nil {
				items = items[1:]
				continue
			}
			return "", err
		}
		if err := c.env.RecordAuxUsage(step, protocol.OperationLocalCompaction, res.usage, res.reported); err != nil {
			return "", &summaryWriteError{err}
		}
		sum.Add(res.usage)
		return res.text, nil
	}
}

// summaryAttempt is one summarizer call's result.
type summaryAttempt struct {
	text     string
	usage    provider.Usage
	reported bool
}

// callSummarizer makes one summarizer attempt. Nothing of it is streamed
// to the client: a summary is not the run's output.
func (c *Compactor) callSummarizer(ctx context.Context, req provider.Request) (summaryAttempt, error) {
	var a summaryAttempt
	s, err := c.env.Provider().Stream(ctx, req)
	if err != nil {
		return a, err
	}
	defer s.Close()
	var text strings.Builder
	for s.Next() {
		ev := s.Event()
		switch ev.Kind {
		case provider.EventText:
			text.WriteString(ev.Text)
		case provider.EventUsage:
			a.usage, a.reported = provider.Reported(ev.Usage)
		}
	}
	a.text = c.env.Redact(text.String())
	return a, s.Err()
}

// summarizerInput is the summarizer's one user message.
func summarizerInput(items []string, prev, instruction string) string {
	var b strings.Builder
	b.WriteString("<conversation>\n")
	b.WriteString(strings.Join(items, "\n\n"))
	b.WriteString("\n</conversation>\n\n")
	if prev != "" {
		b.WriteString("<previous-summary>\n")
		b.WriteString(prev)
		b.WriteString("\n</previous-summary>\n\n")
	}
	b.WriteString(instruction)
	return b.String()
}
