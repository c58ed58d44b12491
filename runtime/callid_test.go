package runtime_test

import (
	"regexp"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
)

// Repeated and malformed tool-call ids from the model are replaced by
// unique, well-formed ones, used alike by tool_start,
// tool_finish and the next request, on every wire.
func TestToolCallIDsAreUnique(t *testing.T) {
	wellFormed := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,40}$`)
	for _, mode := range fakeprovider.Modes() {
		t.Run(string(mode), func(t *testing.T) {
			fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
				{ToolCalls: []fakeprovider.ToolCall{
					{ID: "dup", Name: "ls", Arguments: `{}`},
					{ID: "dup", Name: "ls", Arguments: `{}`},
					{ID: "bad id/../x", Name: "ls", Arguments: `{}`},
				}},
				{Text: "done"},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			evs, res := fakeRun(t, fake, mode, 0)
			if res.Status != "completed" {
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			var started, finished []string
			for _, ev := range evs {
				switch d := ev.Data.(type) {
				case *protocol.ToolStart:
					started = append(started, d.CallID)
				case *protocol.ToolFinish:
					finished = append(finished, d.CallID)
				}
			}
			want := []string{"dup", "call_1_1", "call_1_2"}
			if !equal(started, want) || !equal(finished, want) {
				t.Fatalf("tool_start ids %q, tool_finish ids %q, want %q", started, finished, want)
			}
			reqs := fake.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			calls, results := callIDsOf(mode, reqs[1].Body)
			if !equal(calls, want) || !equal(results, want) {
				t.Errorf("next request: call ids %q, result ids %q, want %q", calls, results, want)
			}
			for _, id := range calls {
				if !wellFormed.MatchString(id) {
					t.Errorf("id %q is not well-formed", id)
				}
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// callIDsOf returns the tool-call ids and the tool-result ids of a request
// body, in order.
func callIDsOf(mode fakeprovider.Mode, body map[string]any) (calls, results []string) {
	str := func(v any) string { s, _ := v.(string); return s }
	objs := func(v any) []map[string]any {
		var out []map[string]any
		arr, _ := v.([]any)
		for _, e := range arr {
			if o, ok := e.(map[string]any); ok {
				out = append(out, o)
			}
		}
		return out
	}
	switch mode {
	case fakeprovider.ModeChat:
		for _, m := range objs(body["messages"]) {
			for _, tc := range objs(m["tool_calls"]) {
				calls = append(calls, str(tc["id"]))
			}
			if id := str(m["tool_call_id"]); id != "" {
				results = append(results, id)
			}
		}
	case fakeprovider.ModeResponses:
		for _, it := range objs(body["input"]) {
			switch str(it["type"]) {
			case "function_call":
				calls = append(calls, str(it["call_id"]))
			case "function_call_output":
				results = append(results, str(it["call_id"]))
			}
		}
	case fakeprovider.ModeAnthropic:
		for _, m := range objs(body["messages"]) {
			for _, b := range objs(m["content"]) {
				switch str(b["type"]) {
				case "tool_use":
					calls = append(calls, str(b["id"]))
				case "tool_result":
					results = append(results, str(b["tool_use_id"]))
				}
			}
		}
	}
	return calls, results
}
