package engine

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"time"

	"octet.dev/host/fsm/recovery"
	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
)

// provider_lifecycle (CONTRACT §9) is opt-in readiness telemetry of a
// configured provider: "lifecycle_events": true on its ~/.octet/models.json
// entry (catalog.Model.LifecycleEvents). Built-in and inline routes never
// emit it. It is advisory: never model output, never written to the
// session. The states, for the assistant turn's model calls:
//
//   - queued: the server turned the call away because it is busy or its
//     queue is full (HTTP 429 or 503 saying so). The call is then retried
//     as any 429/503 is, under the retry budget, and provider_retry
//     follows.
//   - loading: the server says its model is loading. The host waits for
//     readiness and calls again without spending the retry budget (no
//     provider_retry): see callReady.
//   - ready: the first response bytes of a call arrived (a 2xx answer's
//     headers). Every model call that gets an answer emits it once.
//
// What the servers send, as matched by readinessState (message text
// compared in lower case, on answers before any stream content):
//
//   - llama.cpp's llama-server, while it loads its model, answers every
//     request with HTTP 503 {"error":{"message":"Loading model","type":
//     "unavailable_error","code":503}} (older builds put the three members
//     at the top level): loading. Its "no slot available" 503 is queued.
//   - Ollama holds a call open while the model loads; when its runner is
//     not ready in time the call fails with HTTP 500 "unexpected server
//     status: llm server loading model": loading (only with that phrase:
//     another 500 may come after the model ran). With its request queue
//     full it answers 503 "server busy, please try again.  maximum pending
//     requests exceeded", and a runner without a free slot reports "llm
//     busy - no slots available": queued.
//   - Hugging Face inference servers answer 503 "Model <name> is currently
//     loading": loading.
//   - LM Studio loads a model just in time and holds the call open
//     meanwhile: its OpenAI- and Anthropic-compatible endpoints send no
//     load state (its load progress events exist only on its own
//     /api/v1/chat, which octet-host does not speak). Such a load shows as
//     the time from the call to ready; the host does not guess a state
//     from a delay.
//
// Messages that report a failed load ("error loading model", "failed to
// load") are not a loading state: they are failures, classified by
// recovery as usual.

// Bounds of readiness waits (callReady).
const (
	// maxReadinessWait bounds the summed loading waits of one model call
	// (all its attempts): past it, a loading answer is an ordinary
	// retryable failure that spends the retry budget, so a server stuck
	// loading ends the run with retries_exhausted rather than never.
	maxReadinessWait = 10 * time.Minute
	// readinessFirstDelay is the first wait after a loading answer; each
	// further wait doubles, up to readinessMaxDelay. A Retry-After the
	// server sends is honoured instead, within the remaining ceiling.
	readinessFirstDelay = 250 * time.Millisecond
	readinessMaxDelay   = 5 * time.Second
	// maxLifecycleDetail bounds provider_lifecycle.detail, in bytes.
	maxLifecycleDetail = 256
)

// Phrases of the servers' answers (lower case); see the comment above.
var (
	loadingPhrases = []string{"llm server loading model", "is currently loading", "model is loading", "model is still loading"}
	busyPhrases    = []string{"busy", "queue", "no slot available", "no slots available", "pending requests"}
	failedLoad     = []string{"error loading", "failed to load", "unable to load", "failed loading"}
)

// readinessState reports what a failed call says about the server's
// readiness: protocol.LifecycleLoading, protocol.LifecycleQueued, or ""
// for an ordinary failure. Only an HTTP error status answered before any
// stream content counts: the server's own word about why it did not run
// the call.
func readinessState(f recovery.Facts) string {
	if f.Kind != recovery.FailHTTPStatus || f.ContentStarted {
		return ""
	}
	msg := strings.ToLower(strings.TrimSpace(f.Message))
	if containsAny(msg, failedLoad) {
		return ""
	}
	switch f.Status {
	case 503:
		if strings.TrimRight(msg, ".") == "loading model" || containsAny(msg, loadingPhrases) {
			return protocol.LifecycleLoading
		}
	case 500:
		if strings.Contains(msg, "llm server loading model") {
			return protocol.LifecycleLoading
		}
	}
	if (f.Status == 429 || f.Status == 503) && recovery.Classify(f).Kind == recovery.Retry &&
		containsAny(msg+" "+strings.ToLower(f.Code), busyPhrases) {
		return protocol.LifecycleQueued
	}
	return ""
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// readiness is the readiness-wait account of one operation.
type readiness struct {
	waits  int           // loading waits so far
	waited time.Duration // their sum
}

// next returns the wait before calling again after a loading answer, and
// false when the ceiling leaves no room for it.
func (r *readiness) next(f recovery.Facts) (time.Duration, bool) {
	delay := readinessFirstDelay << min(r.waits, 8)
	delay = min(delay, readinessMaxDelay)
	if f.RetryAfterMS > 0 {
		delay = time.Duration(f.RetryAfterMS) * time.Millisecond
	}
	if r.waited+delay > maxReadinessWait {
		return 0, false
	}
	r.waits++
	r.waited += delay
	return delay, true
}

// lifecycleOn reports whether the run's route opted into provider_lifecycle.
func (d *driver) lifecycleOn() bool {
	return d.p.model.LifecycleEvents && !d.p.model.Inline
}

// lifecycle emits provider_lifecycle with a detail made from the failure
// f, or a null detail when f is nil.
func (d *driver) lifecycle(state string, f *recovery.Facts) {
	ev := &protocol.ProviderLifecycle{State: state}
	if f != nil {
		detail := lifecycleDetail(f.Status, d.p.red.String(scrub(f.Message, d.p.key)))
		ev.Detail = &detail
	}
	d.stream(protocol.TypeProviderLifecycle, ev)
}

// lifecycleDetail is the detail of a queued or loading state: "HTTP
// <status>: <the server's message>", as valid UTF-8 without control
// characters, cut to maxLifecycleDetail bytes at a character boundary.
// The message was sanitized at the provider edge and has had the run's
// credentials removed.
func lifecycleDetail(status int, msg string) string {
	s := strings.ToValidUTF8("HTTP "+strconv.Itoa(status)+": "+msg, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	return textutil.Fit(s, maxLifecycleDetail)
}

// callReady makes one attempt of op as the recovery machine sees it. With
// provider_lifecycle on, a queued answer is announced and returned (the
// machine retries it within the budget), and a loading answer starts a
// readiness wait: announced once as loading, it waits (readiness.next)
// and calls again, for as long as the server keeps saying it is loading
// and the ceiling allows, before the machine counts an attempt. A loading
// answer is an HTTP error status before any content (a 503, or Ollama's
// 500 with its loading phrase): the model did not run, so there is
// nothing to bill, no usage uncertainty and no output to discard. The
// machine's graph is unchanged: it sees the call that ended the wait.
// Cancellation during a wait is a cancel before any request is in
// flight.
func callReady[T any](ctx context.Context, d *driver, op operation[T], r *readiness) (T, error) {
	v, err := op.call(ctx)
	if !op.lifecycle {
		return v, err
	}
	announced := false
	for err != nil && ctx.Err() == nil {
		f := facts(err)
		switch readinessState(f) {
		case protocol.LifecycleQueued:
			d.lifecycle(protocol.LifecycleQueued, &f)
			return v, err
		case protocol.LifecycleLoading:
		default:
			return v, err
		}
		delay, ok := r.next(f)
		if !ok {
			return v, err // the ceiling: an ordinary failure from here on
		}
		if !announced {
			d.lifecycle(protocol.LifecycleLoading, &f)
			announced = true
		}
		if op.discard != nil {
			op.discard(v)
		}
		var zero T
		if serr := d.a.opts.Sleep(ctx, delay); serr != nil {
			return zero, cmp.Or(ctx.Err(), serr)
		}
		v, err = op.call(ctx)
	}
	return v, err
}
