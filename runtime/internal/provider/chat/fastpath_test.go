package chat

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"octet.dev/host/runtime/internal/provider/edge"
)

// chunkSeeds returns every data payload of the recorded fixtures.
func chunkSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	dir := filepath.Join("testdata", "openai-chat")
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			switch {
			case strings.HasSuffix(e.Name(), ".sse"):
				if p, ok := bytes.CutPrefix(line, []byte("data: ")); ok && string(p) != "[DONE]" {
					seeds = append(seeds, bytes.Clone(p))
				}
			case strings.HasSuffix(e.Name(), ".jsonl") && len(line) > 0:
				seeds = append(seeds, bytes.Clone(line))
			}
		}
	}
	return seeds
}

var chunkCmp = []cmp.Option{cmp.AllowUnexported(optInt{}), cmpopts.EquateEmpty()}

// checkFastPath asserts that when the fast path accepts data, json v2
// accepts it too and produces the same chunk.
func checkFastPath(t *testing.T, data []byte) (accepted bool) {
	var fast, slow chunk
	if !parseChunkFast(data, &fast, new(edge.Strings)) {
		return false
	}
	if err := json.Unmarshal(data, &slow, unmarshalOpts); err != nil {
		t.Fatalf("fast path accepted what json v2 rejects (%v): %q", err, data)
	}
	if diff := cmp.Diff(slow, fast, chunkCmp...); diff != "" {
		t.Fatalf("fast path differs from json v2 for %q (-v2 +fast):\n%s", data, diff)
	}
	return true
}

func TestFastPathMatchesJSON(t *testing.T) {
	accepted := 0
	seeds := chunkSeeds(t)
	for _, s := range seeds {
		if checkFastPath(t, s) {
			accepted++
		}
	}
	// Text, reasoning and finish chunks must take the fast path; only
	// tool-call, usage and error chunks may decline.
	if accepted < len(seeds)*3/4 {
		t.Errorf("fast path accepted %d of %d fixture chunks", accepted, len(seeds))
	}
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":"a\"b\\c\/d\b\f\n\r\t\u00e9\u20ac"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"\ud83e\udd8a"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"x","content":"y"}}]}`,
		`{"choices":[{"index":1.0,"delta":{}}]}`,
		`{"choices":[{"index":-3,"delta":null,"finish_reason":null}],"usage":null,"error":null}`,
		`{"choices":null}`,
		`{"choices":[]}`,
		`  {"x":[1,-0.5e+3,true,false,null,{"y":{}},[]],"choices":[{"delta":{"reasoning":"r"}}]}  `,
		`{"choices":[{"index":0,"delta":{"content":"bad` + "\xff" + `"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"ctl` + "\x01" + `"}}]}`,
		`{"Choices":[{"index":0,"delta":{"content":"case"}}]}`,
		`{"choices":[{"index":0,"delta":{"CONTENT":"case"}}]}`,
		`{"choices":[{"index":0}]} x`,
		`{"choices":[{"index":01}]}`,
		`null`,
		`{"a":"\u12"}`,
	} {
		checkFastPath(t, []byte(s))
	}
}

func FuzzFastPath(f *testing.F) {
	for _, s := range chunkSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"\u00e9\"\\"}}]}`))
	f.Add([]byte(`{"choices":[{"index":0,"delta":{"reasoning":{"a":1}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastPath(t, data)
	})
}

// FuzzDecode feeds arbitrary bodies to the whole decoder: it must end (with
// a finish or an error), never panic, and keep the stream rules.
func FuzzDecode(f *testing.F) {
	for _, s := range chunkSeeds(f) {
		f.Add([]byte("data: " + string(s) + "\n\ndata: [DONE]\n\n"))
	}
	f.Add([]byte("event: error\ndata: {\"error\":\"x\"}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":{}}}]}}]}\n\ndata: [DONE]"))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _, _ = drainDecoder(t, body)
	})
}
