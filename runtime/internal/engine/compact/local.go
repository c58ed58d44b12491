package compact

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/internal/store"
	"octet.dev/host/runtime/provider"
)

// Local compaction (CONTRACT §17): when the context passes the budget's
// threshold, or the provider refuses a request as too long, the older
// history is summarized by a call on the run's own route and replaced,
// durably, by a checkpoint: the handoff (summary + file evidence) wrapped
// in one user message, then the newest messages kept verbatim.

const (
	// maxHandoffBytes bounds a handoff, evidence included: a larger one is
	// refused, never truncated.
	maxHandoffBytes = 131072
	// toolResultChars is how much of a tool result the transcript keeps.
	toolResultChars = 2000
	// maxSummarizerTrims bounds how often an overflowing summarizer
	// request drops its oldest transcript item and tries again.
	maxSummarizerTrims = 20
)

// summarizerMarker is the phrase of the summarizer's system prompt by
// which the fake provider knows a summarizer request: it must equal
// fakeprovider.SummarizerMarker (a test checks).
const summarizerMarker = "Do not continue the conversation"

// summarizerSystem is the summarizer's system prompt.
const summarizerSystem = "You summarize a conversation between a user and an AI coding agent so that another " +
	"instance of the agent can carry on the work from the summary alone. " + summarizerMarker +
	": do not answer its questions, do not call tools, do not add commentary. Write only the summary, in the " +
	"format you are given, keeping exact file paths, names, commands and error messages."

// summarySections is the format the summary follows.
const summarySections = "Use exactly these sections:\n\n## Goal\n## Constraints & Preferences\n## Progress\n" +
	"### Done\n### In Progress\n### Blocked\n## Key Decisions\n## Next Steps\n## Critical Context\n\n" +
	"Write \"(none)\" under a section with nothing to say."

const (
	summaryCreate = "Summarize the conversation above. " + summarySections
	summaryUpdate = "The previous summary covers what came before the conversation above. Update it with the " +
		"conversation: keep what still holds, add what is new, move finished items from In Progress to Done. " +
		summarySections
	summaryTurnPrefix = "The conversation above is the beginning of a turn whose end is kept verbatim. " +
		"Summarize it for the one who will read that end: the original request, the progress so far, and " +
		"what the rest of the turn needs to know. Use the sections ## Original Request, ## Early Progress " +
		"and ## Context for Suffix."
	splitTurnSeparator = "\n\n---\n\n**Turn Context (split turn):**\n\n"
)

// cutPlan is what one compaction summarizes and keeps.
type cutPlan struct {
	prev       store.Compaction
	hasPrev    bool
	start      int // msgs[start:] are message records (after the wrapped summary)
	firstIndex int // the record index of msgs[start]
	history    []provider.Message
	prefix     []provider.Message // the split turn's summarized beginning
	cut        int                // msgs[cut:] are kept
}

// plan chooses the cut: the newest keep tokens stay verbatim, cut at a
// user or assistant message so that no tool result leaves its call. A cut
// at an assistant message inside a turn splits the turn: its beginning is
// summarized apart. ok is false when nothing lies before the cut.
func (c *Compactor) plan(msgs []provider.Message) (cutPlan, bool) {
	var pl cutPlan
	pl.prev, pl.hasPrev = c.env.LatestCompaction()
	if pl.hasPrev && pl.prev.Items != nil {
		// A native checkpoint of this route, which no longer compacts
		// natively (its models.json entry changed): its items cannot be
		// summarized, and a local checkpoint would lose them.
		return pl, false
	}
	if pl.hasPrev {
		pl.start, pl.firstIndex = 1, pl.prev.FirstKept
	}
	if len(msgs) <= pl.start {
		return pl, false
	}
	var acc int64
	cut := pl.start
	for i := len(msgs) - 1; i >= pl.start; i-- {
		acc += EstimateMessage(&msgs[i])
		if acc >= c.bud.Keep {
			cut = i
			break
		}
	}
	// A valid cut point: forward to the next non-tool message, else back
	// to the one before.
	valid := func(i int) bool { return msgs[i].Role != provider.RoleTool }
	j := cut
	for j < len(msgs) && !valid(j) {
		j++
	}
	if j == len(msgs) {
		for j = cut; j > pl.start && !valid(j); j-- {
		}
	}
	cut = j
	if cut <= pl.start {
		return pl, false
	}
	pl.cut = cut
	turnStart := pl.start
	if msgs[cut].Role == provider.RoleAssistant {
		for i := cut - 1; i >= pl.start; i-- {
			if msgs[i].Role == provider.RoleUser {
				turnStart = i
				break
			}
		}
		pl.history, pl.prefix = msgs[pl.start:turnStart], msgs[turnStart:cut]
	} else {
		pl.history = msgs[pl.start:cut]
	}
	return pl, true
}

// compact runs one local compaction of plan pl and reports whether it
// replaced the context. A refusal or a failed summarizer is ok false with no
// checkpoint; tf is set only when the run must end (canceled, the session
// could not be written).
func (c *Compactor) compact(ctx context.Context, step int, msgs *[]provider.Message, pl cutPlan, reason string, tokensBefore int64) (ok bool, tf *modelcall.Failed) {
	c.env.Emit(protocol.TypeCompactionStart, &protocol.CompactionStart{Reason: reason, Kind: protocol.CompactionLocal, TokensBefore: tokensBefore})
	fin := &protocol.CompactionFinish{Reason: reason, Kind: protocol.CompactionLocal, TokensBefore: tokensBefore}
	refuse := func(code protocol.Code, msg string) (bool, *modelcall.Failed) {
		fin.Error = &protocol.ErrorData{Code: code, Message: bound(msg)}
		c.env.Emit(protocol.TypeCompactionFinish, fin)
		if ctx.Err() != nil {
			return false, canceledFailure()
		}
		return false, nil
	}
	var usage provider.Usage
	prevSummary := ""
	if pl.hasPrev {
		prevSummary = pl.prev.SummaryText
		if prevSummary == "" {
			prevSummary = pl.prev.Summary
		}
	}
	maxOut := int(c.bud.Reserve * 8 / 10)
	summary := prevSummary
	if len(pl.history) > 0 {
		prompt := summaryCreate
		if prevSummary != "" {
			prompt = summaryUpdate
		}
		text, err := c.summarize(ctx, step, serialize(pl.history), prevSummary, prompt, maxOut, &usage)
		if err != nil {
			return c.summarizerFailed(ctx, fin, err)
		}
		summary = text
		if strings.TrimSpace(text) == "" {
			return refuse(protocol.CodeCompactionHandoffEmpty, "the summarizer returned an empty summary")
		}
	}
	if len(pl.prefix) > 0 {
		text, err := c.summarize(ctx, step, serialize(pl.prefix), "", summaryTurnPrefix, maxOut*5/8, &usage)
		if err != nil {
			return c.summarizerFailed(ctx, fin, err)
		}
		if strings.TrimSpace(text) == "" {
			return refuse(protocol.CodeCompactionHandoffEmpty, "the summarizer returned an empty summary of the split turn's beginning")
		}
		if strings.TrimSpace(summary) != "" {
			summary = strings.TrimRightFunc(summary, unicode.IsSpace) + splitTurnSeparator + text
		} else {
			summary = text
		}
	}
	summary = strings.TrimRightFunc(summary, unicode.IsSpace)
	read, modified := fileEvidence(c.cfg.Workspace, pl.history, pl.prefix, pl.prev.ReadFiles, pl.prev.ModifiedFiles)
	handoff, code := assembleHandoff(summary, read, modified)
	fin.SummaryBytes, fin.HandoffBytes = int64(len(summary)), int64(len(handoff))
	switch code {
	case protocol.CodeCompactionHandoffEmpty:
		return refuse(code, "the summary is empty or whitespace only; file evidence alone is no handoff")
	case protocol.CodeCompactionHandoffTooLarge:
		return refuse(code, "the handoff is "+strconv.Itoa(len(handoff))+" bytes, over the limit of "+strconv.Itoa(maxHandoffBytes))
	}
	// The rebuilt context, estimated before the checkpoint is written.
	kept := (*msgs)[pl.cut:]
	after := c.overhead + estimateBytes(len(store.WrapSummary(handoff))) + EstimateMessages(kept)
	cp := store.Compaction{
		Kind: protocol.CompactionLocal, Reason: reason, Summary: handoff, SummaryText: summary,
		ReadFiles: read, ModifiedFiles: modified, FirstKept: c.firstKept(pl, len(*msgs)),
		TokensBefore: tokensBefore, TokensAfterEstimate: after, Usage: new(store.NewUsageV1(usage)),
	}
	return c.checkpoint(cp, msgs, fin, fin.HandoffBytes)
}

// checkpoint ends a compaction with its checkpoint cp: written durably
// before the in-memory context is replaced, then the conversation rebuilt
// from the session into *msgs and the token count reset to the
// checkpoint's estimate. The finish event fin reports the outcome; on
// success its handoff_bytes is handoff (a failure keeps what fin holds).
func (c *Compactor) checkpoint(cp store.Compaction, msgs *[]provider.Message, fin *protocol.CompactionFinish, handoff int64) (bool, *modelcall.Failed) {
	if err := c.env.Append(store.Record{Body: cp}); err != nil {
		fin.Error = &protocol.ErrorData{Code: protocol.CodeCompactionFailed, Message: bound("the checkpoint could not be written: " + err.Error())}
		c.env.Emit(protocol.TypeCompactionFinish, fin)
		return false, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + err.Error()}
	}
	rebuilt, err := c.env.Conversation()
	if err != nil {
		fin.Error = &protocol.ErrorData{Code: protocol.CodeCompactionFailed, Message: bound(err.Error())}
		c.env.Emit(protocol.TypeCompactionFinish, fin)
		return false, &modelcall.Failed{Code: protocol.CodeSessionCorrupt, Msg: err.Error()}
	}
	*msgs = rebuilt
	c.count.reset(cp.TokensAfterEstimate, len(rebuilt))
	fin.OK, fin.TokensAfterEstimate, fin.HandoffBytes = true, cp.TokensAfterEstimate, handoff
	fin.WillRetry = cp.Reason == protocol.CompactionOverflow
	c.env.Emit(protocol.TypeCompactionFinish, fin)
	return true, nil
}

// summarizerFailed ends a compaction whose summarizer call (or, native,
// compaction endpoint call) failed.
func (c *Compactor) summarizerFailed(ctx context.Context, fin *protocol.CompactionFinish, err error) (bool, *modelcall.Failed) {
	what := "the summarizer call failed: "
	if fin.Kind == protocol.CompactionNative {
		what = "the compaction endpoint call failed: "
	}
	msg := what + err.Error()
	var tf *modelcall.Failed
	if errors.As(err, &tf) {
		msg = what + c.env.FailureMessage(tf)
	}
	fin.Error = &protocol.ErrorData{Code: protocol.CodeCompactionFailed, Message: bound(c.env.RedactError(msg))}
	c.env.Emit(protocol.TypeCompactionFinish, fin)
	if ctx.Err() != nil {
		return false, canceledFailure()
	}
	var we *summaryWriteError
	if errors.As(err, &we) {
		return false, &modelcall.Failed{Code: protocol.CodeSessionWriteFailed, Msg: "the session could not be written: " + we.err.Error()}
	}
	return false, nil
}

// serialize writes msgs as the transcript items the summarizer reads:
// one item per message, tool results cut to toolResultChars characters.
func serialize(msgs []provider.Message) []string {
	items := make([]string, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		var b strings.Builder
		switch m.Role {
		case provider.RoleUser:
			b.WriteString("[User]: ")
			b.WriteString(m.Text)
			for _, md := range m.Media {
				b.WriteString(" [" + md.Type + " " + md.MIMEType + "]")
			}
		case provider.RoleAssistant:
			if m.Text != "" {
				b.WriteString("[Assistant]: ")
				b.WriteString(m.Text)
			}
			if len(m.ToolCalls) > 0 {
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				b.WriteString("[Assistant tool calls]: ")
				for j, c := range m.ToolCalls {
					if j > 0 {
						b.WriteString("; ")
					}
					b.WriteString(c.Name + "(" + c.Arguments + ")")
				}
			}
		case provider.RoleTool:
			b.WriteString("[Tool result " + m.ToolName + "]: ")
			b.WriteString(cutChars(m.Text, toolResultChars))
		}
		if b.Len() > 0 {
			items = append(items, b.String())
		}
	}
	return items
}

// cutChars keeps the first n characters of s and says how many it cut.
func cutChars(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			rest := len([]rune(s[i:]))
			return s[:i] + "\n[... " + strconv.Itoa(rest) + " more characters truncated]"
		}
		count++
	}
	return s
}

// assembleHandoff joins the summary and the evidence blocks, and says
// which refusal applies: a summary that is empty or whitespace only
// (evidence or not), or a handoff over maxHandoffBytes. Nothing is
// truncated.
func assembleHandoff(summary string, read, modified []string) (string, protocol.Code) {
	summary = strings.TrimRightFunc(summary, unicode.IsSpace)
	handoff := summary
	if len(read) > 0 {
		handoff += "\n\n<read-files>\n" + strings.Join(read, "\n") + "\n</read-files>"
	}
	if len(modified) > 0 {
		handoff += "\n\n<modified-files>\n" + strings.Join(modified, "\n") + "\n</modified-files>"
	}
	switch {
	case strings.TrimSpace(summary) == "":
		return handoff, protocol.CodeCompactionHandoffEmpty
	case len(handoff) > maxHandoffBytes:
		return handoff, protocol.CodeCompactionHandoffTooLarge
	}
	return handoff, ""
}

// fileEvidence lists the files the summarized calls read and changed:
// only calls whose result is not an error, workspace-relative paths,
// sorted and de-duplicated, merged with the previous checkpoint's lists;
// modified = edit ∪ write, read = read − modified. A path outside the
// workspace is left out, so no absolute host path is ever listed.
func fileEvidence(workspace string, history, prefix []provider.Message, prevRead, prevModified []string) (read, modified []string) {
	readSet, modSet := map[string]bool{}, map[string]bool{}
	for _, p := range prevRead {
		readSet[p] = true
	}
	for _, p := range prevModified {
		modSet[p] = true
	}
	for _, msgs := range [][]provider.Message{history, prefix} {
		calls := map[string]provider.ToolCall{}
		for i := range msgs {
			m := &msgs[i]
			switch m.Role {
			case provider.RoleAssistant:
				for _, c := range m.ToolCalls {
					calls[c.ID] = c
				}
			case provider.RoleTool:
				c, ok := calls[m.ToolCallID]
				if !ok || m.IsError {
					continue
				}
				var set map[string]bool
				switch c.Name {
				case "read":
					set = readSet
				case "edit", "write":
					set = modSet
				default:
					continue
				}
				var args struct {
					Path string `json:"path"`
				}
				if json.Unmarshal([]byte(c.Arguments), &args) != nil {
					continue
				}
				if p, ok := workspacePath(workspace, args.Path); ok {
					set[p] = true
				}
			}
		}
	}
	for p := range modSet {
		modified = append(modified, p)
		delete(readSet, p)
	}
	for p := range readSet {
		read = append(read, p)
	}
	slices.Sort(read)
	slices.Sort(modified)
	return read, modified
}

// workspacePath returns p relative to the workspace, slash-separated and
// clean; ok is false for a path outside it.
func workspacePath(workspace, p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(workspace, p)
		if err != nil {
			return "", false
		}
		p = rel
	}
	p = path.Clean(filepath.ToSlash(p))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return "", false
	}
	return p, true
}

// firstKept is the FirstKept of a checkpoint that keeps the messages from
// pl.cut on, of a conversation of n messages: the file-wide ordinal of the
// message record at pl.cut. After a checkout the head's branch is not a run
// of consecutive records, so the ordinal comes from the session; when the
// session's conversation and the one in memory differ in length (they do
// not, between steps), it falls back to counting from the previous
// checkpoint's first kept record.
func (c *Compactor) firstKept(pl cutPlan, n int) int {
	if ords := c.env.ConversationOrdinals(); len(ords) == n-pl.start && pl.cut-pl.start < len(ords) {
		return ords[pl.cut-pl.start]
	}
	return pl.firstIndex + pl.cut - pl.start
}
