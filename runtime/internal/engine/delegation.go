package engine

import (
	"context"
	"strconv"

	"octet.dev/host/fsm/recovery"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/reasoning"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/tools"
	"octet.dev/host/runtime/provider"
)

// Delegation: with the Ultra reasoning mode the Go API installs a
// delegation manager on the agent, whose runs then offer the model the
// delegate tool (package reasoning owns the tool, the manager and the
// decisions); a delegate call starts a worker run here. Every worker event
// reaches the observer (Observation.Parent names the delegating run).
const (
	// DelegateTool is the tool's name.
	DelegateTool = reasoning.DelegateTool
	// MaxConcurrentWorkers bounds the worker runs of an agent running at
	// once; a delegate call over it waits for a worker to end.
	MaxConcurrentWorkers = reasoning.MaxConcurrentWorkers
	// MaxWorkersPerRun bounds the worker runs one run starts; the call
	// after fails with worker_limit.
	MaxWorkersPerRun = reasoning.MaxWorkersPerRun
)

// Tool error codes of delegate (tool_finish.data.error.code).
const (
	CodeWorkerLimit  = reasoning.CodeWorkerLimit
	CodeWorkerFailed = reasoning.CodeWorkerFailed
)

// installDelegation installs the agent's delegation manager, once.
func (a *Agent) installDelegation() {
	a.delegation.CompareAndSwap(nil, reasoning.NewManager())
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
	return reasoning.Offered(specs, d.a.delegation.Load() != nil, d.parent != "")
}

// runDelegate decides and runs a delegate call.
func (d *driver) runDelegate(ctx context.Context, call provider.ToolCall, args []byte, isObject bool,
	reply func(*protocol.ToolFinish) provider.Message, fail func(code protocol.Code, msg string) provider.Message) provider.Message {
	m := d.a.delegation.Load()
	decision, denied := reasoning.Authorize(d.p.policy.Decide(call.Name, policy.EffectDelegation), d.p.policy.EffectivePolicy, m != nil, d.parent != "")
	if !decision.Allowed {
		d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: decision})
		return fail(decision.DenialCode, denied)
	}
	if call.ArgumentsDropped > 0 {
		return fail(tools.CodeInvalidArguments, droppedArgsMessage(call.ArgumentsDropped))
	}
	task, err := reasoning.ParseDelegateArgs(args, isObject, MaxPromptBytes)
	if err != nil {
		return fail(tools.CodeInvalidArguments, err.Error())
	}
	if d.workers >= MaxWorkersPerRun {
		return fail(CodeWorkerLimit, "the run already started "+strconv.Itoa(MaxWorkersPerRun)+" workers, its limit")
	}
	d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: decision})
	if !m.Acquire(ctx) {
		return fail(protocol.CodeCanceled, "the run was canceled")
	}
	defer m.Release()
	d.workers++

	req := d.p.req
	req.RunID = reasoning.WorkerID(d.p.req.RunID, d.workers)
	req.Prompt, req.DisplayText, req.SessionID, req.History, req.Media = task, "", "", nil, nil
	req.ConfirmDelivery = false
	req.Tools = make([]string, len(d.p.tools))
	for i, t := range d.p.tools {
		req.Tools[i] = t.Spec.Name
	}
	// The effort in effect now, pinned for the worker's run: a later
	// change of the parent's reaches the workers started after it.
	req.ReasoningEffort = d.rs.WorkerEffort()
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
			msg += " (" + string(res.Error.Code) + "): " + res.Error.Message
		}
		return fail(CodeWorkerFailed, msg)
	}
	return reply(&protocol.ToolFinish{CallID: call.ID, Tool: call.Name, OK: true, Output: res.Output})
}
