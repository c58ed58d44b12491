package client

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
	"octet.dev/host/wire"
)

func TestMarshalRun(t *testing.T) {
	tests := []struct {
		name string
		req  protocol.RunRequest
		want map[string]any
	}{
		{"absent stays absent", protocol.RunRequest{RunID: "r", Workspace: "/w", Model: "m", Prompt: "p"},
			map[string]any{"protocol_version": 1.0, "request_id": "req-1", "command": "run", "run_id": "r", "workspace": "/w", "model": "m", "prompt": "p"}},
		{"empty values stay present", protocol.RunRequest{RunID: "r", Workspace: "/w", Model: "m", Prompt: "p",
			Tools: &[]string{}, AllowFileMutation: ptr(false), MaxSteps: ptr[int64](0), CustomHeaders: map[string]string{}},
			map[string]any{"protocol_version": 1.0, "request_id": "req-1", "command": "run", "run_id": "r", "workspace": "/w", "model": "m", "prompt": "p",
				"tools": []any{}, "allow_file_mutation": false, "max_steps": 0.0, "custom_headers": map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := marshalRun("req-1", &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if line[len(line)-1] != '\n' {
				t.Fatalf("no newline: %q", line)
			}
			var got map[string]any
			if err := json.Unmarshal(line[:len(line)-1], &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatalf("line %s\n(-want +got):\n%s", line, d)
			}
			// The host's strict decoder accepts it.
			if _, derr := wire.Decode(line[:len(line)-1]); derr != nil {
				t.Fatalf("wire.Decode: %v", derr)
			}
		})
	}
}

func TestMarshalModelsAndEnvelope(t *testing.T) {
	line, err := marshalLine(modelsLine{envelope: newEnvelope("req-7", protocol.CommandModels), Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(line), `{"protocol_version":1,"request_id":"req-7","command":"models","offline":true}`+"\n"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	line, err = marshalLine(newEnvelope("req-8", protocol.CommandHello))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(line), `{"protocol_version":1,"request_id":"req-8","command":"hello"}`+"\n"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestRing(t *testing.T) {
	r := newRing(8)
	var all []byte
	for i, chunk := range []string{"ab", "cdef", "ghijk", "", "lmnopqrstuvwxyz", "1", "23"} {
		r.Write([]byte(chunk))
		all = append(all, chunk...)
		want := string(all)
		if len(want) > 8 {
			want = want[len(want)-8:]
		}
		if got := r.String(); got != want {
			t.Fatalf("step %d: %q, want %q", i, got, want)
		}
	}
	if got := newRing(0); got.String() != "" {
		t.Fatal("zero ring")
	}
}
