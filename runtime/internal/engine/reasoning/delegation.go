package reasoning

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/provider"
)

// Delegation: with the Ultra reasoning mode the Go API installs a
// delegation Manager on the agent. From then on (leaving Ultra keeps it)
// the runs the application starts offer the model a delegate tool, whose
// call starts a worker run: a child run on the same agent, with a context
// and a session of its own, the parent's route, workspace and tools (never
// delegate: the depth is 1), the parent's network-wait ceiling, and the
// parent's effective reasoning effort at the call, pinned for the worker's
// whole run (State.WorkerEffort). The call waits for the worker and
// returns its answer. octet-host never installs a manager (the protocol
// has no field for it): there, delegate is denied with
// delegation_not_enabled.
const (
	// DelegateTool is the tool's name.
	DelegateTool = "delegate"
	// MaxConcurrentWorkers bounds the worker runs of an agent running at
	// once; a delegate call over it waits for a worker to end.
	MaxConcurrentWorkers = 4
	// MaxWorkersPerRun bounds the worker runs one run starts; the call
	// after fails with worker_limit.
	MaxWorkersPerRun = 16
)

// Tool error codes of delegate (tool_finish.data.error.code).
const (
	CodeWorkerLimit  = protocol.CodeWorkerLimit
	CodeWorkerFailed = protocol.CodeWorkerFailed
)

// DelegateSpec is the delegate tool as the model is offered it.
var DelegateSpec = provider.ToolSpec{
	Name:        DelegateTool,
	Description: "Hand a self-contained task to a worker: a separate agent run with its own context and the same tools and workspace. It returns the worker's final answer. Use it for independent subtasks; the worker sees nothing of this conversation but the task.",
	Parameters:  []byte(`{"type":"object","properties":{"task":{"type":"string","description":"The complete task for the worker, with every fact it needs."}},"required":["task"],"additionalProperties":false}`),
}

// Manager bounds an agent's worker runs.
type Manager struct {
	slots chan struct{} // one per running worker
}

// NewManager returns a manager of MaxConcurrentWorkers slots.
func NewManager() *Manager {
	return &Manager{slots: make(chan struct{}, MaxConcurrentWorkers)}
}

// Acquire takes a worker slot, waiting for one while ctx allows; false:
// ctx ended first.
func (m *Manager) Acquire(ctx context.Context) bool {
	select {
	case m.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// Release gives back a slot Acquire took.
func (m *Manager) Release() { <-m.slots }

// Offered returns the tools of a model call: specs, and delegate when the
// agent has a delegation manager (installed) and the run is not a worker.
func Offered(specs []provider.ToolSpec, installed, worker bool) []provider.ToolSpec {
	if worker || !installed {
		return specs
	}
	return append(specs[:len(specs):len(specs)], DelegateSpec)
}

// Authorize decides a delegate call: the policy's decision (decided),
// unless the embedding application enabled delegation (a manager is
// installed and the run is not a worker: it selected Ultra, with an
// observer that sees every worker event); and the message of a denial.
func Authorize(decided policy.Decision, effective protocol.EffectivePolicy, installed, worker bool) (policy.Decision, string) {
	if installed && !worker {
		return policy.Decision{Effect: policy.EffectDelegation, Allowed: true, Authorization: protocol.AuthOperator, Policy: effective}, ""
	}
	if decided.Allowed {
		return decided, ""
	}
	if worker {
		return decided, "delegate is denied: a worker cannot delegate (depth 1)"
	}
	return decided, "delegate is denied: no delegation manager is installed (the Go API's Ultra reasoning mode installs one; octet-host never does)"
}

// WorkerID is the n-th worker's run id: the parent's, cut to leave room,
// and ".worker-n".
func WorkerID(parent string, n int) string {
	suffix := ".worker-" + strconv.Itoa(n)
	if len(parent)+len(suffix) > 128 {
		parent = parent[:128-len(suffix)]
	}
	return parent + suffix
}

// ParseDelegateArgs returns the task of a delegate call: an object with
// exactly one non-empty string member, task, of at most maxBytes.
func ParseDelegateArgs(args []byte, isObject bool, maxBytes int) (string, error) {
	if !isObject {
		return "", fmt.Errorf("the arguments are not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	var a struct {
		Task *string `json:"task"`
	}
	if err := dec.Decode(&a); err != nil {
		return "", fmt.Errorf("delegate takes {\"task\": string}: %v", err)
	}
	if a.Task == nil || strings.TrimSpace(*a.Task) == "" {
		return "", fmt.Errorf("task is missing or empty")
	}
	if len(*a.Task) > maxBytes {
		return "", fmt.Errorf("task is %d bytes; the limit is %d", len(*a.Task), maxBytes)
	}
	return *a.Task, nil
}
