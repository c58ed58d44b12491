package reasoning

import (
	"context"
	"strings"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/provider"
)

func TestWorkerID(t *testing.T) {
	if got := WorkerID("run-1", 3); got != "run-1.worker-3" {
		t.Errorf("WorkerID %q", got)
	}
	long := strings.Repeat("r", 128)
	got := WorkerID(long, 12)
	if len(got) != 128 || !strings.HasSuffix(got, ".worker-12") {
		t.Errorf("a long parent's worker id %q (%d bytes)", got, len(got))
	}
}

func TestParseDelegateArgs(t *testing.T) {
	if task, err := ParseDelegateArgs([]byte(`{"task":"fetch it"}`), true, 100); err != nil || task != "fetch it" {
		t.Errorf("%q, %v", task, err)
	}
	for _, tc := range []struct {
		args     string
		isObject bool
		want     string
	}{
		{`"x"`, false, "not a JSON object"},
		{`{"task":"x","more":1}`, true, "unknown field"},
		{`{"task":"  "}`, true, "missing or empty"},
		{`{}`, true, "missing or empty"},
		{`{"task":"` + strings.Repeat("x", 101) + `"}`, true, "101 bytes; the limit is 100"},
	} {
		if _, err := ParseDelegateArgs([]byte(tc.args), tc.isObject, 100); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestOffered(t *testing.T) {
	specs := make([]provider.ToolSpec, 1, 4)
	specs[0] = provider.ToolSpec{Name: "ls"}
	if got := Offered(specs, true, false); len(got) != 2 || got[1].Name != DelegateTool {
		t.Errorf("installed: %v", got)
	}
	if specs[:2][1].Name != "" {
		t.Error("Offered wrote into the caller's array")
	}
	if got := Offered(specs, false, false); len(got) != 1 {
		t.Errorf("no manager: %v", got)
	}
	if got := Offered(specs, true, true); len(got) != 1 {
		t.Errorf("a worker: %v", got)
	}
}

func TestAuthorize(t *testing.T) {
	denied := policy.Decision{Effect: policy.EffectDelegation, DenialCode: protocol.CodeDelegationNotEnabled}
	eff := protocol.EffectivePolicy{}
	if d, msg := Authorize(denied, eff, true, false); !d.Allowed || d.Authorization != protocol.AuthOperator || msg != "" {
		t.Errorf("installed: %+v %q", d, msg)
	}
	if d, msg := Authorize(denied, eff, false, false); d.Allowed || d.DenialCode != protocol.CodeDelegationNotEnabled || !strings.Contains(msg, "no delegation manager") {
		t.Errorf("not installed: %+v %q", d, msg)
	}
	if d, msg := Authorize(denied, eff, true, true); d.Allowed || !strings.Contains(msg, "a worker cannot delegate") {
		t.Errorf("a worker: %+v %q", d, msg)
	}
}

// TestManagerBound: MaxConcurrentWorkers slots; the next Acquire waits
// until a Release, or fails when its context ends.
func TestManagerBound(t *testing.T) {
	m := NewManager()
	for range MaxConcurrentWorkers {
		if !m.Acquire(context.Background()) {
			t.Fatal("a free slot was refused")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if m.Acquire(ctx) {
		t.Fatal("a slot over the bound was taken")
	}
	got := make(chan bool)
	go func() { got <- m.Acquire(context.Background()) }()
	m.Release()
	if !<-got {
		t.Error("a released slot was not taken")
	}
}
