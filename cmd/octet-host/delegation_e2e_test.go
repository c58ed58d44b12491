package main

import (
	"bytes"
	"fmt"
	"testing"

	"octet.dev/host/runtime/fakeprovider"
)

// TestDelegateDeniedInOctetHost: octet-host never installs a delegation
// manager (the protocol has no field for one, and its Controlled policy
// keeps the ambient delegation effect denied, whatever the operator
// enabled): the model is not offered delegate, and a delegate call it makes
// anyway is denied by tool_policy with delegation_not_enabled, after which
// the run goes on.
func TestDelegateDeniedInOctetHost(t *testing.T) {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{ToolCalls: []fakeprovider.ToolCall{{ID: "d-1", Name: "delegate", Arguments: `{"task":"count the files"}`}}},
		{Text: "done alone"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	// The operator enables everything it can: delegation stays denied.
	h := &bashHost{proc: startEnv(t, []string{"OCTET_ALLOW_SHELL=1", "OCTET_ALLOW_PROCESS=1", "OCTET_ALLOW_REMOTE_READ=1"}, hostBin), fake: fake, ws: t.TempDir()}
	h.send(t, fmt.Sprintf(`{"protocol_version":1,"request_id":"r-1","command":"run","run_id":"run-1","workspace":%q,"model":"m","prompt":"go","provider":"fake","base_url":%q,"allow_file_mutation":true}`,
		h.ws, fake.BaseURL(fakeprovider.ModeChat)))
	evs := h.events(t)
	pol := dataOf(t, evs, "tool_policy")
	fin := dataOf(t, evs, "tool_finish")
	if len(pol) != 1 || len(fin) != 1 {
		t.Fatalf("policy %v finish %v", pol, fin)
	}
	dec := pol[0]["decision"].(map[string]any)
	if dec["allowed"] != false || dec["denial_code"] != "delegation_not_enabled" || dec["effect"] != "delegation" || pol[0]["tool"] != "delegate" {
		t.Errorf("decision %v", pol[0])
	}
	if fin[0]["ok"] != false || fin[0]["error"].(map[string]any)["code"] != "delegation_not_enabled" {
		t.Errorf("tool_finish %v", fin[0])
	}
	res := dataOf(t, evs, "final_result")
	if len(res) != 1 || res[0]["status"] != "completed" || res[0]["output"] != "done alone" {
		t.Errorf("final_result %v", res)
	}
	// The first request is the model's only view of the tools before it
	// called delegate (later ones carry the call).
	if reqs := fake.Requests(); len(reqs) == 0 || bytes.Contains(reqs[0].RawBody, []byte(`"delegate"`)) {
		t.Errorf("the first request offers delegate, or none was made: %d requests", len(reqs))
	}
}
