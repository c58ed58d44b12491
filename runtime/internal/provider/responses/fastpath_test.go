package responses

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"octet.dev/host/runtime/internal/provider/edge"
)

// eventSeeds returns every data payload of the recorded fixtures.
func eventSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".sse") || strings.HasSuffix(name, ".jsonl")) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			switch {
			case strings.HasSuffix(name, ".sse"):
				if p, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
					seeds = append(seeds, bytes.Clone(p))
				}
			case len(line) > 0:
				seeds = append(seeds, bytes.Clone(line))
			}
		}
	}
	return seeds
}

// extraSeeds are shapes the fixtures lack: escapes, nulls, wrong kinds,
// odd numbers, duplicates, invalid input.
var extraSeeds = []string{
	`{"type":"response.output_text.delta","output_index":0,"delta":"caf\u00e9 \ud83e\udd8a \n\"q\"\\"}`,
	`{"type":"response.output_text.delta","output_index":0,"delta":"lone \ud800 x"}`,
	`{"type":"response.output_text.delta","output_index":0,"delta":"lone \udc00"}`,
	"{\"type\":\"response.output_text.delta\",\"delta\":\"bad \xff\"}",
	`{"type":"response.output_text.delta","output_index":null,"delta":null}`,
	`{"type":"response.output_text.delta","output_index":1.5,"delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":-0,"delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":1e2,"delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":12345678901234567,"delta":"x"}`,
	`{"type":"response.output_text.delta","output_index":"0","delta":"x"}`,
	`{"type":"response.output_text.delta","delta":{"a":[1,true,false,null,"s"]}}`,
	`{"type":"response.output_text.delta","type":"response.refusal.delta","delta":"x"}`,
	`{"\u0074ype":"response.output_text.delta","delta":"x"}`,
	`{"type":"response.output\u005ftext.delta","delta":"x"}`,
	`{"type":5,"delta":"x"}`,
	`{"delta":"x","summary_index":2,"output_index":3,"type":"response.reasoning_summary_text.delta"}`,
	` { "type" : "response.function_call_arguments.delta" , "delta" : "{\"a\":" } `,
	`{"item":0,"response":"x","error":[],"type":"response.output_text.delta","delta":"x"}`,
	`{}`, `[]`, `"x"`, `{"type":"x"} {}`, `{"type":"x",}`, `{"type":"x"`, `{"a":01}`, `{"a":-}`, `{"a":1.}`,
	`{"a":1e}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}", `{"a":[1,]}`, `{"a" 1}`,
}

// checkFastPath asserts that when the fast path accepts data, json v2
// accepts it too, sees the same type and, for a usable delta event, the
// same output_index, summary_index and delta.
func checkFastPath(t *testing.T, data []byte) (accepted bool) {
	var fe fastEvent
	if !parseFast(data, &fe) {
		return false
	}
	if !jsontext.Value(data).IsValid(unmarshalOpts) {
		t.Fatalf("fast path accepted invalid JSON: %q", data)
	}
	var head struct {
		Type edge.TextOnly `json:"type"`
	}
	if err := json.Unmarshal(data, &head, unmarshalOpts); err != nil {
		t.Fatalf("fast path accepted what json v2 rejects (%v): %q", err, data)
	}
	if string(head.Type) != string(fe.typ) {
		t.Fatalf("type: fast %q, json v2 %q, in %q", fe.typ, head.Type, data)
	}
	if !kindOf(fe.typ).isDelta() || !fe.fieldsOK {
		return true
	}
	var ev wireDelta
	if err := json.Unmarshal(data, &ev, unmarshalOpts); err != nil {
		t.Fatalf("fast path decoded a delta json v2 rejects (%v): %q", err, data)
	}
	var scratch []byte
	if got := fe.text(&scratch, new(edge.Strings)); got != ev.Delta || fe.outputIndex != ev.OutputIndex || fe.summaryIndex != ev.SummaryIndex {
		t.Fatalf("fast (%d, %d, %q) != json v2 (%d, %d, %q) for %q",
			fe.outputIndex, fe.summaryIndex, got, ev.OutputIndex, ev.SummaryIndex, ev.Delta, data)
	}
	return true
}

// TestFastPathEquivalence runs the check over every recorded event, and
// makes sure the fast path takes all the recorded deltas.
func TestFastPathEquivalence(t *testing.T) {
	deltas, fast := 0, 0
	for _, data := range eventSeeds(t) {
		accepted := checkFastPath(t, data)
		var fe fastEvent
		if parseFast(data, &fe) && kindOf(fe.typ).isDelta() {
			deltas++
			if accepted && fe.fieldsOK {
				fast++
			}
		}
		if !accepted {
			t.Errorf("fast path declined a recorded event: %.200s", data)
		}
	}
	if deltas == 0 || fast != deltas {
		t.Errorf("fast path decoded %d of %d recorded deltas", fast, deltas)
	}
	for _, s := range extraSeeds {
		checkFastPath(t, []byte(s))
	}
}

func FuzzFastPath(f *testing.F) {
	for _, s := range eventSeeds(f) {
		if len(s) < 4096 {
			f.Add(s)
		}
	}
	for _, s := range extraSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastPath(t, data)
	})
}

// TestSurrogatesPaired checks the validation against unescape, which
// decides the same thing while building the text.
func TestSurrogatesPaired(t *testing.T) {
	for _, raw := range []string{
		`plain`, `\n\t\"\\\/`, `\u00e9`, `\ud83e\udd8a`, `\ud83e`, `\ud83ex`, `\ud83e\n`, `\ud83e\u0041`,
		`\udd8a`, `x\ud83e\udd8a\ud83e\udd8ay`, `\ud83e\ud83e\udd8a`, `\\ud83e`,
	} {
		_, want := edge.Unescape(nil, []byte(raw))
		if got := edge.SurrogatesPaired([]byte(raw)); got != want {
			t.Errorf("surrogatesPaired(%s) = %v, unescape says %v", raw, got, want)
		}
	}
}
