package engine

import (
	"strings"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/policy"
)

func shellFixture(t *testing.T, turns ...[]StreamEvent) *fixture {
	f := newFixture(t, turns...)
	yes := true
	f.agent.opts.PolicyLayers = []PolicyLayer{{Source: policy.SourceCLI, AllowShell: &yes, AllowProcess: &yes}}
	return f
}

func TestBashRunsWhenOperatorEnabled(t *testing.T) {
	t.Setenv("OCTET_TEST_API_KEY", "must-not-leak")
	f := shellFixture(t,
		calls(ToolCall{ID: "ok", Name: "bash", Arguments: `{"command":"echo out; echo err >&2; env"}`},
			ToolCall{ID: "fail", Name: "bash", Arguments: `{"command":"exit 3"}`},
			ToolCall{ID: "slow", Name: "bash", Arguments: `{"command":"sleep 30 & sleep 30; wait","timeout_ms":200}`},
			ToolCall{ID: "bad", Name: "bash", Arguments: `{"cmd":"ls"}`}),
		text("done"))
	evs, res := f.run(f.req("run commands"))
	if res.Status != "completed" {
		t.Fatalf("result %+v", res)
	}
	fin := map[string]*protocol.ToolFinish{}
	for _, x := range find[protocol.ToolFinish](evs) {
		fin[x.CallID] = x
	}
	if ok := fin["ok"]; !ok.OK || *ok.ExitCode != 0 || !strings.Contains(ok.Output, "out") || !strings.Contains(ok.Output, "err") {
		t.Errorf("ok: %+v", ok)
	}
	if strings.Contains(fin["ok"].Output, "must-not-leak") {
		t.Error("a credential variable reached the command's environment")
	}
	if x := fin["fail"]; x.OK || x.Error.Code != "command_failed" || *x.ExitCode != 3 {
		t.Errorf("fail: %+v %+v", x, x.Error)
	}
	if x := fin["slow"]; x.OK || x.Error.Code != "timed_out" {
		t.Errorf("slow: %+v %+v", x, x.Error)
	}
	if x := fin["bad"]; x.OK || x.Error.Code != "invalid_arguments" {
		t.Errorf("bad: %+v", x.Error)
	}
	var streams []string
	for _, p := range find[protocol.ToolProgress](evs) {
		if p.CallID == "ok" {
			streams = append(streams, p.Stream)
		}
	}
	if !strings.Contains(strings.Join(streams, ","), "stdout") || !strings.Contains(strings.Join(streams, ","), "stderr") {
		t.Errorf("tool_progress streams %v", streams)
	}
	for _, p := range find[protocol.ToolPolicy](evs) {
		// Allowed evidence only after every gate: the malformed call is
		// refused before any decision is announced.
		if p.CallID == "bad" {
			t.Errorf("tool_policy for a call with malformed arguments: %+v", p.Decision)
		}
		if p.Tool == "bash" && (!p.Decision.Allowed || p.Decision.Authorization != "operator" || p.Decision.Policy.AllowShell.Source != "cli") {
			t.Errorf("decision %+v", p.Decision)
		}
	}
}

func TestChildEnvDropsCredentials(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "OPENAI_API_KEY=x", "GITHUB_TOKEN=y", "MY_SECRET=z", "HOME=/h", "DB_PASSWORD=p"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/h" {
		t.Errorf("childEnv = %v", got)
	}
}
