package store

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// Every record type the fast path is meant for has its schema: a field of
// a kind it does not support sends a whole type to the general path, which
// this test reports.
func TestFastSchemas(t *testing.T) {
	for _, typ := range []string{TypeMessage, TypeRunStart, TypeModelChange, TypeUsage, TypeReasoningChange, TypeRunEnd, TypeCheckout, TypeNativeSteering, TypeUsageUncertainty} {
		if fastTypes()[typ] == nil {
			t.Errorf("%s: no fast path: %v", typ, fastErrs()[typ])
		}
	}
}

// loadView is what loading takes from a record: what observe keeps and
// validate checks.
type loadView struct {
	Kind     kind
	Type     string
	ZeroTS   bool
	RunID    string
	NoOrigin bool
	Role     string
	Effort   string
	Media    []MediaV1
	Output   []MediaV1
	Items    bool
	ItemKind jsontext.Kind
	Route    string
	Whole    Body // the records loading keeps whole
	Validate []string
}

func viewOf(r Record) loadView {
	v := loadView{Kind: kindOf(r.Body), Type: r.Type(), ZeroTS: r.TS.IsZero()}
	switch b := r.Body.(type) {
	case Message:
		v.RunID, v.NoOrigin, v.Role, v.Effort = b.RunID, b.Origin == "", b.Message.Role, b.Message.ReasoningEffort
		v.Media, v.Output = b.Message.Media, b.Message.OutputMedia
	case RunStart:
		v.RunID = b.RunID
	case Compaction:
		v.Items, v.ItemKind, v.Route = b.Items != nil, b.Items.Kind(), b.Route
		v.Whole = Compaction{FirstKept: b.FirstKept}
	case Unknown:
	default:
		v.Whole = b
	}
	for _, ctx := range []struct{ msgs, n int }{{0, 0}, {3, 5}} {
		err := validate(r, ctx.msgs, func(int) string { return TypeMessage }, ctx.n)
		v.Validate = append(v.Validate, fmt.Sprint(err))
	}
	return v
}

// checkLoadDecode checks that the loader's decoding of line (the fast
// path, skimming, or the full decode) has decodeRecord's verdict and
// error, and gives loading what the full decode gives it.
func checkLoadDecode(t *testing.T, line []byte) {
	t.Helper()
	full, fullErr := decodeRecord(line)
	got, err := decodeSkim(line)
	if fmt.Sprint(err) != fmt.Sprint(fullErr) {
		t.Fatalf("%q: loader %v, full decode %v", line, err, fullErr)
	}
	if err != nil {
		return
	}
	if diff := cmp.Diff(viewOf(full), viewOf(got)); diff != "" {
		t.Fatalf("%q (-full +loader):\n%s", line, diff)
	}
	if typ, _ := sniffType(line); fastTypes()[typ] != nil {
		if r, ok := fastTypes()[typ].decode(line); ok {
			if diff := cmp.Diff(viewOf(full), viewOf(r)); diff != "" {
				t.Fatalf("%q: fast path (-full +fast):\n%s", line, diff)
			}
		}
	}
}

// fastSeeds are lines of every type, canonical and not.
func fastSeeds() []string {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	recs := append(sampleRecords(), realisticRecords(40)...)
	recs = append(recs,
		Record{Body: Message{RunID: "r", Origin: "steering", Message: MessageV1{Role: RoleUser, Text: "q\u2028\x01\"\\/<>&é😀",
			Media: []MediaV1{{Type: "image", MIMEType: "image/png", SHA256: strings.Repeat("ab", 32), Bytes: 12}}}}},
		Record{Body: Message{Message: MessageV1{Role: RoleDeveloper, ReasoningEffort: "high", Text: "update"}}},
		Record{Body: Usage{RunID: "r", Step: 2, Operation: "terminal_gate", Model: "m", Usage: UsageV1{InputTokens: -1, TotalTokens: 1 << 40}, CostUSD: 1e-7, Discarded: true}},
		Record{Body: UsageUncertainty{Endpoint: "e", Model: "m", Operation: "o"}},
		Record{Body: Checkout{Entry: 3}},
		Record{Body: NativeSteering{IntentID: "i", Event: NativeLinked, ResponseID: "resp", Step: 4}},
		Record{Body: Compaction{Summary: longText, FirstKept: 2, Items: jsontext.Value(`[{"a":1}]`), Route: "x"}},
		Record{Body: Fork{ParentID: "p", ParentEntry: 2}},
	)
	var out []string
	for _, r := range recs {
		if r.TS.IsZero() {
			r.TS = ts
		}
		b, err := appendRecord(nil, r)
		if err != nil {
			panic(err)
		}
		out = append(out, string(bytes.TrimSuffix(b, []byte{'\n'})))
	}
	return append(out,
		`{"type":"message","ts":"2026-01-02T03:04:05Z","message":{"role":"user","text":"a"},"message":{"role":"user"}}`,
		`{"type":"message","ts":"2026-01-02T03:04:05Z","message":{"role":"user","text":"\ud83d\ude00"}}`,
		`{"type":"message","ts":"2026-01-02T03:04:05Z","message":{"role":"user","text":"\ud83d"}}`,
		`{"type":"message", "ts":"2026-01-02T03:04:05Z","message":{"role":"user","text":null}}`,
		`{"type":"message","ts":"2026-01-02T03:04:05+01:00","message":{"role":"user","Text":"x","is_error":true}}`,
		`{"type":"message","ts":"0001-01-01T00:00:00Z","message":{"role":"user"}}`,
		`{"type":"message","ts":"2026-01-02T03:04:05.Z","message":{"role":"user"}}`,
		`{"type":"message","ts":"2026-13-02T03:04:05Z","message":{"role":"user"}}`,
		`{"type":"message","ts":"2026-01-02T03:04:05Z","run_id":"\u0000skimmed","message":{"role":"user","media":[{"type":"image","mime_type":"image/png","sha256":"00","bytes":-0}]}}`,
		`{"type":"usage","ts":"2026-01-02T03:04:05Z","step":1.0,"usage":{"input_tokens":1e3}}`,
		`{"type":"usage","ts":"2026-01-02T03:04:05Z","step":-1,"cost_usd":1e999}`,
		`{"type":"usage","ts":"2026-01-02T03:04:05Z","step":99999999999999999999}`,
		`{"type":"checkout","ts":"2026-01-02T03:04:05Z","entry":"3"}`,
		`{"type":"run_end","ts":"2026-01-02T03:04:05Z","run_id":"r","status":"completed","code":""}x`,
		`{"type":"reasoning_change","ts":"2026-01-02T03:04:05Z","effort":"low","ultra":tru}`,
		`{"type":"future","ts":"2026-01-02T03:04:05Z"}`,
	)
}

func TestLoadDecodeMatchesFull(t *testing.T) {
	for _, line := range fastSeeds() {
		checkLoadDecode(t, []byte(line))
	}
	// The canonical lines take the fast path.
	for _, r := range realisticRecords(40) {
		r.TS = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		line, _ := appendRecord(nil, r)
		typ, _ := sniffType(line)
		if _, ok := fastTypes()[typ].decode(bytes.TrimSuffix(line, []byte{'\n'})); !ok {
			t.Errorf("canonical %s line declined: %s", typ, line)
		}
	}
}

// FuzzLoadDecode: the loader's decoding of a line agrees with the full
// decode (see checkLoadDecode).
func FuzzLoadDecode(f *testing.F) {
	for _, line := range fastSeeds() {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkLoadDecode(t, line)
	})
}
