package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// termWidth is f's width in columns, 80 when unknown.
func termWidth(f io.Writer) int {
	if file, ok := f.(*os.File); ok {
		if ws, err := unix.IoctlGetWinsize(int(file.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			return int(ws.Col)
		}
	}
	return 80
}

// reporter writes print mode's progress to stderr: on a terminal one live
// status line, redrawn in place (the step, the running tool, retries and
// network waits), with warnings and errors as permanent lines above it;
// otherwise plain lines, one per notable event.
type reporter struct {
	w    io.Writer
	live bool
	now  func() time.Time

	model     string
	sessionID string
	step      int
	tool      string // the running tool, "" between calls
	toolCalls int
	wait      string // a retry or network wait, until the next progress
	uncertain bool   // the usage warning was given
	shown     bool   // a live line is on screen
	lastDraw  time.Time
}

func newReporter(w io.Writer, live bool) *reporter {
	return &reporter{w: w, live: live, now: time.Now}
}

// line prints a permanent line (clearing the live line first).
func (r *reporter) line(format string, args ...any) {
	r.clear()
	fmt.Fprintf(r.w, "octet: "+format+"\n", args...)
}

func (r *reporter) clear() {
	if r.live && r.shown {
		io.WriteString(r.w, "\r\x1b[2K")
		r.shown = false
	}
}

// draw redraws the live status line; force skips the throttle that keeps
// streamed text from redrawing more than 20 times a second.
func (r *reporter) draw(force bool) {
	if !r.live {
		return
	}
	now := r.now()
	if !force && now.Sub(r.lastDraw) < 50*time.Millisecond {
		return
	}
	r.lastDraw = now
	var b strings.Builder
	b.WriteString("octet: ")
	if r.model != "" {
		b.WriteString(r.model)
		b.WriteString(" · ")
	}
	fmt.Fprintf(&b, "step %d", max(r.step, 1))
	switch {
	case r.wait != "":
		b.WriteString(" · " + r.wait)
	case r.tool != "":
		b.WriteString(" · running " + r.tool)
	default:
		b.WriteString(" · thinking")
	}
	if r.toolCalls > 0 {
		fmt.Fprintf(&b, " · %d tool call", r.toolCalls)
		if r.toolCalls > 1 {
			b.WriteString("s")
		}
	}
	s := truncate(b.String(), termWidth(r.w)-1)
	io.WriteString(r.w, "\r\x1b[2K"+s)
	r.shown = true
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n-1 {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// event takes one run event.
func (r *reporter) event(ev runtime.Event) {
	switch d := ev.Data.(type) {
	case *protocol.Accepted:
		r.model = d.Model.Provider + "/" + d.Model.Name
		if !r.live {
			r.line("model %s, session %s", r.model, r.sessionID)
		}
		r.draw(true)
	case *protocol.ModelDelta:
		r.step, r.wait = d.Step, ""
		r.draw(false)
	case *protocol.ToolStart:
		r.step, r.tool, r.wait = d.Step, d.Tool, ""
		r.toolCalls++
		if !r.live {
			r.line("step %d: %s", d.Step, d.Tool)
		}
		r.draw(true)
	case *protocol.ToolFinish:
		r.tool = ""
		if !d.OK && d.Error != nil {
			r.line("%s failed: %s: %s", d.Tool, d.Error.Code, oneLine(d.Error.Message))
		}
		r.draw(true)
	case *protocol.ModelStep:
		r.step = d.Step + 1
		if d.UsageUncertain {
			r.warnUncertain()
		}
		r.draw(true)
	case *protocol.ProviderRetry:
		r.wait = fmt.Sprintf("retry %d/%d in %s", d.Attempt, d.MaxAttempts, ms(d.DelayMS))
		if !r.live {
			r.line("provider attempt failed (%s); %s", oneLine(d.Error), r.wait)
		}
		r.draw(true)
	case *protocol.ProviderWaitingForNetwork:
		r.wait = fmt.Sprintf("waiting for the network (attempt %d, %s)", d.Attempt, ms(d.DelayMS))
		if !r.live {
			r.line("%s: %s", r.wait, oneLine(d.Error))
		}
		r.draw(true)
	case *protocol.ProviderOperationRetry:
		r.wait = fmt.Sprintf("%s retry %d in %s", d.Operation, d.Attempt, ms(d.DelayMS))
		if !r.live {
			r.line("%s failed (%s); %s", d.Operation, oneLine(d.Error), r.wait)
		}
		r.draw(true)
	case *protocol.ProviderUsageUncertain:
		r.warnUncertain()
	case *protocol.SteeringDelivered, *protocol.FollowUpDelivered:
	}
}

func (r *reporter) warnUncertain() {
	if r.uncertain {
		return
	}
	r.uncertain = true
	r.line("warning: usage is uncertain: a failed provider attempt may have been billed without reporting its usage, so this session's token and cost figures are lower bounds")
	r.draw(true)
}

// finish clears the live line and reports how the run ended.
func (r *reporter) finish(res protocol.FinalResult) {
	r.clear()
	switch res.Status {
	case protocol.StatusCompleted:
		if !r.live {
			r.line("completed: %d step(s), %d tool call(s), session %s", res.Steps, res.ToolCalls, r.sessionID)
		}
	case protocol.StatusBlocked:
		r.line("blocked after %d step(s): %s", res.Steps, errText(res.Error))
	default:
		r.line("error: %s", errText(res.Error))
	}
}

func errText(e *protocol.ErrorData) string {
	if e == nil {
		return "no reason given"
	}
	return string(e.Code) + ": " + oneLine(e.Message)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func ms(d int64) string { return (time.Duration(d) * time.Millisecond).String() }
