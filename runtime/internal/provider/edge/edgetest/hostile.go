package edgetest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// The hostile-stream checks: what every wire decoder must hold whatever a
// provider (or anything between it and the host) sends. A decoder is fed
// arbitrary bytes, mutated recorded streams and the hostile shapes
// (endless text, giant tool arguments, duplicate and empty tool-call
// ids, interleaved indices, unknown event types, truncated JSON, nesting
// bombs), and CheckHostile asserts:
//
//   - it ends: never panics, and delivers nothing after EventFinish;
//   - it finishes exactly when it reports no error, and every error is a
//     *provider.Error of a decoding kind (decode, stream_cut, error_event)
//     the recovery rules classify, never a raw error;
//   - its output is bounded by its input: all the bytes it delivers (text,
//     reasoning, signatures, tool calls) are at most OutputFactor times
//     the input plus a small constant, and so is the number of events;
//   - every text is valid UTF-8 (it becomes a JSON frame on stdout), and
//     every tool call has a non-empty id and name;
//   - how the body is cut into reads does not change anything.

// OpenDecoder opens a mode's decoder over r with the given event bound.
type OpenDecoder func(r io.Reader, maxEventBytes int) edge.Decoder

// OutputFactor bounds a decoder's output by its input: one invalid UTF-8
// byte becomes U+FFFD (three bytes), the largest growth there is.
const OutputFactor = 3

// outputSlack covers the constant parts of the output that need little
// input: a generated id ("call_0"), a finish reason.
const outputSlack = 64

// Outcome is what a decoder made of a body.
type Outcome struct {
	Events []provider.StreamEvent
	Err    *provider.Error // nil after a normal end
}

// ToolCalls returns the tool calls of o, in order.
func (o Outcome) ToolCalls() []provider.ToolCall {
	var out []provider.ToolCall
	for _, ev := range o.Events {
		if ev.Kind == provider.EventToolCall {
			out = append(out, ev.ToolCall)
		}
	}
	return out
}

// Text returns the answer text of o.
func (o Outcome) Text() string {
	var b strings.Builder
	for _, ev := range o.Events {
		if ev.Kind == provider.EventText {
			b.WriteString(ev.Text)
		}
	}
	return b.String()
}

var finishReasons = map[string]bool{
	provider.FinishStop: true, provider.FinishToolCalls: true, provider.FinishLength: true,
	provider.FinishRefusal: true, provider.FinishOther: true,
}

// decodingKinds are the failures a decoder reports by itself; the others
// (connect, http_status, idle_timeout, canceled) need facts only the
// call has.
var decodingKinds = map[provider.FailKind]bool{
	provider.FailDecode: true, provider.FailStreamCut: true, provider.FailErrorEvent: true,
}

// WantFailure is a check for a hostile case of a wire's table: the stream
// failed with kind.
func WantFailure(kind provider.FailKind) func(t *testing.T, o Outcome) {
	return func(t *testing.T, o Outcome) {
		t.Helper()
		if o.Err == nil || o.Err.Kind != kind {
			t.Errorf("error %v, want a %s failure", o.Err, kind)
		}
	}
}

// CheckHostile decodes body with open and maxEventBytes, checks the
// invariants above and returns the outcome.
func CheckHostile(t testing.TB, body []byte, open OpenDecoder, maxEventBytes int) Outcome {
	t.Helper()
	whole := drainHostile(t, open(bytes.NewReader(body), maxEventBytes), len(body))
	var split io.Reader = iotest.HalfReader(bytes.NewReader(body))
	if len(body) <= 4096 {
		split = iotest.OneByteReader(bytes.NewReader(body))
	}
	cut := drainHostile(t, open(split, maxEventBytes), len(body))
	if diff := cmp.Diff(whole, cut, cmp.Comparer(sameFailure)); diff != "" {
		t.Fatalf("the outcome depends on how the body is read (-whole +cut):\n%s", diff)
	}
	return whole
}

func sameFailure(a, b *provider.Error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Kind == b.Kind && a.Code == b.Code && a.Message == b.Message
}

func drainHostile(t testing.TB, d edge.Decoder, inLen int) Outcome {
	t.Helper()
	var (
		o        Outcome
		out      int
		finished bool
	)
	maxEvents := inLen + 4
	for d.Next() {
		ev := d.Event()
		if finished {
			t.Fatalf("event %+v after EventFinish", ev)
		}
		o.Events = append(o.Events, ev)
		if len(o.Events) > maxEvents {
			t.Fatalf("more than %d events from %d bytes of input", maxEvents, inLen)
		}
		out += len(ev.Text) + len(ev.Signature) + len(ev.Redacted) + len(ev.BlockID) +
			len(ev.ToolCall.ID) + len(ev.ToolCall.Name) + len(ev.ToolCall.Arguments) + len(ev.FinishReason)
		if limit := OutputFactor*inLen + outputSlack; out > limit {
			t.Fatalf("%d bytes of output from %d bytes of input (limit %d): unbounded growth", out, inLen, limit)
		}
		checkEvent(t, ev)
		finished = ev.Kind == provider.EventFinish
	}
	if d.Next() {
		t.Fatal("Next returned true after the end")
	}
	err := d.Err()
	if finished != (err == nil) || finished != d.Finished() {
		t.Fatalf("finished %v, Finished() %v, with error %v: a normal end needs EventFinish and no error", finished, d.Finished(), err)
	}
	if err != nil {
		// The body is in memory: no read can fail, so every failure is
		// the decoder's own, classified.
		var pe *provider.Error
		if !errors.As(err, &pe) || error(pe) != err {
			t.Fatalf("error %T %v is not a *provider.Error: recovery cannot classify it", err, err)
		}
		if !decodingKinds[pe.Kind] {
			t.Fatalf("decoder failure of kind %q (%v): not a decoding failure", pe.Kind, err)
		}
		o.Err = pe
	}
	return o
}

func checkEvent(t testing.TB, ev provider.StreamEvent) {
	t.Helper()
	for name, s := range map[string]string{
		"text": ev.Text, "signature": ev.Signature, "redacted": ev.Redacted, "block id": ev.BlockID,
		"tool call id": ev.ToolCall.ID, "tool name": ev.ToolCall.Name, "tool arguments": ev.ToolCall.Arguments,
	} {
		if !utf8.ValidString(s) {
			t.Fatalf("%s is not valid UTF-8: %+q", name, s)
		}
	}
	switch ev.Kind {
	case provider.EventText, provider.EventReasoning, provider.EventUsage:
	case provider.EventToolCall:
		if ev.ToolCall.ID == "" || ev.ToolCall.Name == "" {
			t.Fatalf("tool call without an id or a name: %+v", ev.ToolCall)
		}
	case provider.EventFinish:
		if !finishReasons[ev.FinishReason] {
			t.Fatalf("finish reason %q is not a normalized one", ev.FinishReason)
		}
	default:
		t.Fatalf("event of unknown kind %d", ev.Kind)
	}
}

// HostileSeeds returns the recorded streams under dir (.sse as recorded,
// .chunks.jsonl framed by frame) up to maxBytes each: the seed corpus of a
// hostile fuzz target.
func HostileSeeds(tb testing.TB, dir string, maxBytes int, frame func(tb testing.TB, name string, raw []byte) []byte) [][]byte {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		var body []byte
		switch {
		case strings.HasSuffix(name, ".sse"):
			body = ReadFixture(tb, dir, name)
		case strings.HasSuffix(name, ".chunks.jsonl"):
			body = frame(tb, name, ReadFixture(tb, dir, name))
		default:
			continue
		}
		if len(body) <= maxBytes {
			seeds = append(seeds, body)
		}
	}
	if len(seeds) == 0 {
		tb.Fatalf("no recorded stream under %s", dir)
	}
	return seeds
}

// Mutate reshapes a stream event by event, the way a broken proxy or a
// hostile server would: ops is read two bytes at a time, an operation and
// the event it applies to, and drops, repeats, swaps, cuts or truncates
// events. The events are the blocks between blank lines ("\n\n").
func Mutate(body, ops []byte) []byte {
	if len(ops) < 2 {
		return body
	}
	evs := bytes.SplitAfter(body, []byte("\n\n"))
	for i := 0; i+1 < len(ops) && len(evs) > 0; i += 2 {
		at := int(ops[i+1]) % len(evs)
		switch ops[i] % 6 {
		case 0: // drop
			evs = append(evs[:at:at], evs[at+1:]...)
		case 1: // repeat
			evs = append(evs[:at+1:at+1], evs[at:]...)
		case 2: // swap with the next
			if at+1 < len(evs) {
				evs[at], evs[at+1] = evs[at+1], evs[at]
			}
		case 3: // the stream ends here
			evs = evs[:at]
		case 4: // truncate the event to half its bytes
			evs[at] = evs[at][:len(evs[at])/2]
		case 5: // move it to the end
			e := evs[at]
			evs = append(append(evs[:at:at], evs[at+1:]...), e)
		}
	}
	return bytes.Join(evs, nil)
}

// DepthBomb returns n opening brackets, a value and n closing ones: the
// nesting past any sane depth that a decoder must refuse or skip without
// recursing itself to death.
func DepthBomb(n int) string {
	return strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
}

// EndlessReader yields head, then body over and over, for ever: a
// provider that never stops talking. BytesRead counts the bytes.
type EndlessReader struct {
	head, body []byte
	off        int // into head, then into body
	inBody     bool
	BytesRead  int64
}

// NewEndless returns an EndlessReader of head then body repeated.
func NewEndless(head, body string) *EndlessReader {
	return &EndlessReader{head: []byte(head), body: []byte(body)}
}

// Read implements io.Reader.
func (r *EndlessReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		src := r.head
		if r.inBody {
			src = r.body
		}
		if r.off == len(src) {
			r.inBody, r.off = true, 0
			continue
		}
		c := copy(p[n:], src[r.off:])
		r.off += c
		n += c
	}
	r.BytesRead += int64(n)
	return n, nil
}

// HeapInUse returns the live heap after a collection.
func HeapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// CheckEndlessEvent feeds a decoder one event that never ends (head, then
// fill for ever): it must stop with a decode failure once the event
// passes maxEventBytes, having read little more than that and allocated
// no more than a few times the bound in all.
func CheckEndlessEvent(t testing.TB, open OpenDecoder, maxEventBytes int, head, fill string) {
	t.Helper()
	r := NewEndless(head, fill)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	d := open(r, maxEventBytes)
	for d.Next() {
	}
	runtime.ReadMemStats(&ms1)
	var pe *provider.Error
	if err := d.Err(); !errors.As(err, &pe) || pe.Kind != provider.FailDecode {
		t.Fatalf("endless event: error %v, want a decode failure", err)
	}
	if limit := int64(maxEventBytes) + 1<<20; r.BytesRead > limit {
		t.Errorf("read %d bytes of an endless event bounded at %d", r.BytesRead, maxEventBytes)
	}
	if allocated, limit := ms1.TotalAlloc-ms0.TotalAlloc, uint64(8*maxEventBytes+4<<20); allocated > limit {
		t.Errorf("allocated %d bytes for an endless event bounded at %d", allocated, maxEventBytes)
	}
}

// EndlessDeltaText is the text of each delta CheckEndlessDeltas feeds:
// large enough that a decoder keeping what it delivered shows at once.
var EndlessDeltaText = strings.Repeat("some words ", 36)

// endlessDeltas is how many deltas CheckEndlessDeltas reads: 16 MB of
// text, four times the growth it tolerates.
const endlessDeltas = 40000

// CheckEndlessDeltas feeds a decoder a stream of deltas that never ends
// (head, then delta(EndlessDeltaText) for ever) and reads 40,000 events
// of it: the decoder must keep delivering them with a flat heap, holding
// nothing it has delivered (capping a whole step is the agent loop's job,
// which it can only do if the decoder does not hoard).
func CheckEndlessDeltas(t testing.TB, open OpenDecoder, head string, delta func(text string) string) {
	t.Helper()
	r := NewEndless(head, delta(EndlessDeltaText))
	d := open(r, 0)
	var base uint64
	for i := 0; i < endlessDeltas; i++ {
		if !d.Next() {
			t.Fatalf("endless deltas: stream ended after %d events: %v", i, d.Err())
		}
		if i == endlessDeltas/10 {
			base = HeapInUse()
		}
	}
	if after := HeapInUse(); after > base+4<<20 {
		t.Errorf("heap grew from %d to %d bytes over %d deltas (%d bytes read): the decoder keeps what it delivered",
			base, after, endlessDeltas, r.BytesRead)
	}
	runtime.KeepAlive(d)
}

// CheckLinear decodes build(n) and build(16n) (n/4 under the race
// detector, which slows everything tenfold), best of three each, and
// fails when the larger took more than 64 times as long: a stream's cost
// must grow with its length, not with its square (a decoder that scans
// every call it has seen for each new delta is quadratic in the number of
// tool calls, which a hostile server controls).
func CheckLinear(t testing.TB, open OpenDecoder, n int, build func(n int) []byte) {
	t.Helper()
	if raceEnabled {
		n = max(n/4, 1)
	}
	cost := func(body []byte) time.Duration {
		best := time.Duration(1<<63 - 1)
		for range 3 {
			start := time.Now()
			d := open(bytes.NewReader(body), 0)
			for d.Next() {
			}
			if err := d.Err(); err != nil {
				t.Fatalf("decoding %d bytes: %v", len(body), err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	// Sixteen times the calls cost sixteen times the time when the
	// decoder is linear and 256 times when it is quadratic: the bound in
	// between leaves room for a busy machine's noise (the best of three
	// runs is taken of each).
	small, large := cost(build(n)), cost(build(16*n))
	if large > 64*max(small, time.Millisecond) {
		t.Errorf("decoding took %v for %d and %v for %d: more than linear", small, n, large, 16*n)
	}
}
