package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/policy"
	"octet.dev/host/runtime/internal/tools"
	"octet.dev/host/runtime/provider"
)

// runTool executes one tool call under the policy and returns the tool
// result message for the model. A denied or failed call is reported to
// the model as an error; the run goes on (CONTRACT §9–§10).
func (d *driver) runTool(ctx context.Context, step int, call provider.ToolCall) provider.Message {
	d.toolCalls++
	args := []byte(call.Arguments)
	if len(strings.TrimSpace(call.Arguments)) == 0 {
		args = []byte("{}") // some servers send "" for a call without arguments
	}
	argValue := jsontext.Value(args)
	isObject := argValue.IsValid() && argValue.Kind() == '{'
	if !isObject {
		argValue, _ = jsontext.AppendQuote(nil, textutil.Truncate(call.Arguments, 4096))
	}
	if call.ArgumentsDropped > 0 {
		// Too large for any frame: the decoder dropped them, and
		// tool_start says so in their place.
		isObject = false
		argValue, _ = jsontext.AppendQuote(nil, droppedArgsMessage(call.ArgumentsDropped))
	}
	d.stream(protocol.TypeToolStart, &protocol.ToolStart{Step: step, CallID: call.ID, Tool: call.Name, Arguments: argValue})

	reply := func(fin *protocol.ToolFinish) provider.Message {
		// A tool's output may hold a credential too (a file the model read).
		fin.Output = d.p.red.String(fin.Output)
		if fin.Error != nil {
			fin.Error.Message = d.p.red.String(fin.Error.Message)
		}
		d.stream(protocol.TypeToolFinish, fin)
		msg := provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: fin.Output}
		if fin.Error != nil {
			msg.IsError = true
			msg.Text = "error " + string(fin.Error.Code) + ": " + fin.Error.Message
			if fin.Output != "" { // a failed command's output matters to the model
				msg.Text += "\n" + fin.Output
			}
		}
		return msg
	}
	fail := func(code protocol.Code, msg string) provider.Message {
		return reply(&protocol.ToolFinish{CallID: call.ID, Tool: call.Name, Error: &protocol.ErrorData{Code: code, Message: bound(msg)}})
	}

	if call.Name == DelegateTool {
		return d.runDelegate(ctx, call, args, isObject, reply, fail)
	}
	var def *toolDef
	for i := range d.p.tools {
		if d.p.tools[i].Spec.Name == call.Name {
			def = &d.p.tools[i]
		}
	}
	var decision policy.Decision
	if def == nil {
		decision = d.p.policy.Unknown()
	} else {
		decision = d.p.policy.Decide(call.Name, def.Effect)
	}
	if !decision.Allowed {
		d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: decision})
		return fail(decision.DenialCode, denialMessage(call.Name, decision.DenialCode))
	}
	if call.ArgumentsDropped > 0 {
		return fail(tools.CodeInvalidArguments, droppedArgsMessage(call.ArgumentsDropped))
	}
	if !isObject {
		return fail(tools.CodeInvalidArguments, "the arguments are not a JSON object")
	}
	env := tools.Env{Root: d.p.root, MaxOutputBytes: int(d.p.policy.MaxOutputBytes.Value), Guard: d.p.guard, Skills: d.p.skills.Resolve}
	// Malformed arguments end the call before it is announced as allowed;
	// a path refused by a workspace gate (confinement, link refusal,
	// protected path) is a policy denial with the same code.
	if def.Effect == policy.EffectProcess {
		if _, err := parseBashArgs(args); err != nil {
			return fail(tools.CodeInvalidArguments, err.Error())
		}
	} else if err := tools.Gate(env, call.Name, args); err != nil {
		var te *tools.Error
		if !errors.As(err, &te) {
			return fail(tools.CodeInvalidArguments, err.Error())
		}
		if code, ok := gateDenial(te.Code); ok {
			d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: policy.Deny(decision, code)})
		}
		return fail(te.Code, te.Message)
	}
	// Every gate has passed: the allowed evidence goes out now. The tool
	// still opens every path beneath the workspace descriptor, so a link or
	// escape that appears after the gate fails the call with the same code.
	d.stream(protocol.TypeToolPolicy, &protocol.ToolPolicy{CallID: call.ID, Tool: call.Name, Decision: decision})
	if def.Effect == policy.EffectProcess {
		return reply(d.runBash(ctx, call, args))
	}
	res, err := tools.Run(ctx, env, call.Name, args)
	if err != nil {
		var te *tools.Error
		if errors.As(err, &te) {
			return fail(te.Code, te.Message)
		}
		return fail(tools.CodeIOError, err.Error())
	}
	for _, c := range res.Changed {
		if !slices.Contains(d.changed, c) {
			d.changed = append(d.changed, c)
		}
	}
	return reply(&protocol.ToolFinish{CallID: call.ID, Tool: call.Name, OK: true, Output: res.Output, Truncated: res.Truncated})
}

// gateDenial maps a tool error of a workspace gate to its denial code.
func gateDenial(code protocol.Code) (protocol.Code, bool) {
	switch code {
	case tools.CodePathOutsideWorkspace:
		return protocol.CodePathOutsideWorkspace, true
	case tools.CodeSymlinkRefused:
		return protocol.CodeSymlinkRefused, true
	case tools.CodeProtectedPath:
		return protocol.CodeProtectedPath, true
	}
	return "", false
}

// droppedArgsMessage explains a call whose arguments went over
// provider.MaxToolArgBytes.
func droppedArgsMessage(size int) string {
	return "the arguments are " + strconv.Itoa(size) + " bytes, over the limit of " +
		strconv.Itoa(provider.MaxToolArgBytes) + " bytes for one call; they were dropped"
}

func denialMessage(tool string, code protocol.Code) string {
	switch code {
	case protocol.CodeUnknownTool:
		return "there is no tool named " + strconv.Quote(textutil.Truncate(tool, 64)) + " in this run"
	case protocol.CodeMutationNotAuthorized:
		return "file changes are not authorized for this run"
	case protocol.CodeProcessNotEnabled:
		return "running commands is not enabled by the operator of this host"
	case protocol.CodeShellUnavailable:
		return "no shell is available on this host"
	}
	return "the call is not allowed by the host's policy"
}
