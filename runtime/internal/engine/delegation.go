package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"octet.dev/host/fsm/recovery"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/tools"
	"octet.dev/host/runtime/provider"
)

// Delegation: with the Ultra reasoning mode the Go API installs a
// delegation manager on the agent. From then on (leaving Ultra keeps it)
// the runs the application starts offer the model a delegate tool, whose
// call starts a worker run: a child run on the same agent, with a context
// and a session of its own, the parent's route, workspace and tools (never
// delegate: the depth is 1), the parent's network-wait ceiling, and the
// parent's effective reasoning effort at the call, pinned for the worker's
// whole run. The call waits for the worker and returns its answer. Every
// worker event reaches the observer (Observation.Parent names the
// delegating run). octet-host never installs a manager (the protocol has no
// field for it): there, delegate is denied with delegation_not_enabled.
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

var delegateSpec = provider.ToolSpec{
	Name:        DelegateTool,
	Description: "Hand a self-contained task to a worker: a separate agent run with its own context and the same tools and workspace. It returns the worker's final answer. Use it for independent subtasks; the worker sees nothing of this conversation but the task.",
	Parameters:  []byte(`{"type":"object","properties":{"task":{"type":"string","description":"The complete task for the worker, with every fact it needs."}},"required":["task"],"additionalProperties":false}`),
}

// delegationManager bounds an agent's worker runs.
type delegationManager struct {
	slots chan struct{} // one per running worker
}

// installDelegation installs the agent's delegation manager, once.
func (a *Agent) installDelegation() {
	a.delegation.CompareAndSwap(nil, &delegationManager{slots: make(chan struct{}, MaxConcurrentWorkers)})
}

// DelegationInstalled reports whether the agent has a delegation manager:
// selecting Ultra installs it, and it stays.
func (a *Agent) DelegationInstalled() bool { return a.delegation.Load() != nil }

// worker is what a worker run inherits from its parent.
type worker struct {
	parent   string          // the parent's run id
	recovery recovery.Config // the parent's network-wait ceiling and retries
}

// offeredTools returns the tools of the next model call: the run's, and
// delegate when the agent has a delegation manager and the run is not a
// worker.
func (d *driver) offeredTools(specs []provider.ToolSpec) []provider.ToolSpec {
	if d.parent != "" || d.a.delegation.Load() == nil {
		return specs
	}
	return append(specs[:len(specs):len(specs)], delegateSpec)
}

// runDelegate decides and runs a delegate call.
func (d *driver) runDelegate(ctx context.Context, call provider.ToolCall, args []byte, isObject bool,
	reply func(*protocol.ToolFinish) provider.Message, fail func(code, msg string) provider.Message) provider.Message {
	m := d.a.delegation.Load()
	decision := d.p.policy.Decide(call.Name, policy.EffectDelegation)
	if m != nil && d.parent == "" {
		// The embedding application enabled it: it selected Ultra, with
		// an observer that sees every worker event.
		decision = policy.Decision{Effect: policy.EffectDelegation, Allowed: true, Authorization: protocol.AuthOperator, Policy: d.p.policy.EffectivePolicy}
	}
	if !decision.Allowed {
		d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: decision})
		msg := "delegate is denied: no delegation manager is installed (the Go API's Ultra reasoning mode installs one; octet-host never does)"
		if d.parent != "" {
			msg = "delegate is denied: a worker cannot delegate (depth 1)"
		}
		return fail(decision.DenialCode, msg)
	}
	if call.ArgumentsDropped > 0 {
		return fail(tools.CodeInvalidArguments, droppedArgsMessage(call.ArgumentsDropped))
	}
	task, err := parseDelegateArgs(args, isObject)
	if err != nil {
		return fail(tools.CodeInvalidArguments, err.Error())
	}
	if d.workers >= MaxWorkersPerRun {
		return fail(CodeWorkerLimit, "the run already started "+strconv.Itoa(MaxWorkersPerRun)+" workers, its limit")
	}
	d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: decision})
	select {
	case m.slots <- struct{}{}:
	case <-ctx.Done():
		return fail(protocol.CodeCanceled, "the run was canceled")
	}
	defer func() { <-m.slots }()
	d.workers++

	req := d.p.req
	req.RunID = workerID(d.p.req.RunID, d.workers)
	req.Prompt, req.DisplayText, req.SessionID, req.History, req.Media = task, "", "", nil, nil
	req.ConfirmDelivery = false
	req.Tools = make([]string, len(d.p.tools))
	for i, t := range d.p.tools {
		req.Tools[i] = t.spec.Name
	}
	// The effort in effect now, pinned for the worker's run: a later
	// change of the parent's reaches the workers started after it.
	req.ReasoningEffort = nil
	if e := d.effective().Effort; e != "" && d.p.model.SupportsReasoning {
		req.ReasoningEffort = &e
	}
	rc, err := d.a.start(ctx, req, &worker{parent: d.p.req.RunID, recovery: d.recovery})
	if err != nil {
		return fail(CodeWorkerFailed, "the worker could not start: "+err.Error())
	}
	for range rc.Events() {
		// The observer has seen each event; nobody else reads them.
	}
	res := rc.Wait()
	if res.Status != "completed" {
		msg := "the worker " + req.RunID + " ended with status " + res.Status
		if res.Error != nil {
			msg += " (" + res.Error.Code + "): " + res.Error.Message
		}
		return fail(CodeWorkerFailed, msg)
	}
	return reply(&protocol.ToolFinish{CallID: call.ID, Tool: call.Name, OK: true, Output: res.Output})
}

// workerID is the n-th worker's run id: the parent's, cut to leave room,
// and ".worker-n".
func workerID(parent string, n int) string {
	suffix := ".worker-" + strconv.Itoa(n)
	if len(parent)+len(suffix) > 128 {
		parent = parent[:128-len(suffix)]
	}
	return parent + suffix
}

// parseDelegateArgs returns the task of a delegate call: an object with
// exactly one non-empty string member, task.
func parseDelegateArgs(args []byte, isObject bool) (string, error) {
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
	if len(*a.Task) > MaxPromptBytes {
		return "", fmt.Errorf("task is %d bytes; the limit is %d", len(*a.Task), MaxPromptBytes)
	}
	return *a.Task, nil
}
