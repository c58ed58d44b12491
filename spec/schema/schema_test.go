package schema_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"octet.dev/host/internal/schematest"
	"octet.dev/host/protocol"
	"octet.dev/host/protocol/rpc"
	"octet.dev/host/spec/schema"
	"octet.dev/host/spec/schema/internal/generate"
)

// TestNotStale regenerates the schema in memory and compares it with the
// committed file and the embedded copy.
func TestNotStale(t *testing.T) {
	want, err := generate.Generate("../../protocol")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(schema.FileName)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./spec/schema", schema.FileName)
	}
	if !bytes.Equal(schema.JSON(), got) {
		t.Error("the embedded schema differs from the file")
	}
	j := schema.JSON()
	j[0] = 'x'
	if schema.JSON()[0] != '{' {
		t.Error("JSON returns a shared slice")
	}
}

func defs(t *testing.T) map[string]map[string]any {
	t.Helper()
	var doc struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(schema.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Defs
}

// TestDefinitions checks that every command has a closed request
// definition and every event type of protocol 1 an event definition, and
// nothing more.
func TestDefinitions(t *testing.T) {
	d := defs(t)
	for _, c := range protocol.Commands() {
		r := d[strings.ToUpper(c[:1])+c[1:]+"Request"]
		if r == nil || r["additionalProperties"] != false {
			t.Errorf("command %s: no closed request definition", c)
		}
	}
	var types []string
	for name, def := range d {
		if !strings.HasSuffix(name, "Event") {
			continue
		}
		p, _ := def["properties"].(map[string]any)
		typ, _ := p["type"].(map[string]any)
		if c, ok := typ["const"].(string); ok {
			types = append(types, c)
		}
	}
	slices.Sort(types)
	var want []string
	for _, typ := range protocol.Types() {
		want = append(want, string(typ))
	}
	slices.Sort(want)
	if !slices.Equal(types, want) {
		t.Errorf("event definitions for %v, want %v", types, want)
	}
}

// TestValidates checks frames the schema must accept and reject, so that
// the validation of the other tests cannot pass vacuously.
func TestValidates(t *testing.T) {
	good := func(s string) string { return s }
	env := func(typ, data string) string {
		return `{"protocol_version":1,"request_id":"r1","seq":1,"type":"` + typ + `","data":` + data + `}`
	}
	fr := func(errJSON string) string {
		return env("final_result", `{"status":"error","output":"","error":`+errJSON+`,"filesChanged":[],"toolCalls":0,"steps":0,"sessionFile":null}`)
	}
	cases := []struct {
		name, line string
		event, ok  bool
	}{
		{"hello request", good(`{"protocol_version":1,"request_id":"a-1","command":"hello"}`), false, true},
		{"models request", `{"protocol_version":1,"request_id":"a","command":"models","offline":true}`, false, true},
		{"run request", `{"protocol_version":1,"request_id":"a","command":"run","run_id":"r","workspace":"/w","model":"m","prompt":"p","tools":[],"media":[{"type":"image","path":"a.png"}],"reasoning":{"effort":"low"},"custom_headers":{"x":"y"}}`, false, true},
		{"run request, optional null", `{"protocol_version":1,"request_id":"a","command":"run","run_id":"r","workspace":"/w","model":"m","prompt":"p","session_id":null}`, false, false},
		{"run request, null inside", `{"protocol_version":1,"request_id":"a","command":"run","run_id":"r","workspace":"/w","model":"m","prompt":"p","tools":[null]}`, false, false},
		{"run request, missing prompt", `{"protocol_version":1,"request_id":"a","command":"run","run_id":"r","workspace":"/w","model":"m"}`, false, false},
		{"run request, bad run_id", `{"protocol_version":1,"request_id":"a","command":"run","run_id":"r/1","workspace":"/w","model":"m","prompt":"p"}`, false, false},
		{"run request, unknown nested", `{"protocol_version":1,"request_id":"a","command":"run","run_id":"r","workspace":"/w","model":"m","prompt":"p","reasoning":{"effort":"low","x":1}}`, false, false},
		{"hello request, unknown member", `{"protocol_version":1,"request_id":"a","command":"hello","offline":true}`, false, false},
		{"request, long id", `{"protocol_version":1,"request_id":"` + strings.Repeat("a", 129) + `","command":"hello"}`, false, false},
		{"request, version 2", `{"protocol_version":2,"request_id":"a","command":"hello"}`, false, false},
		{"request, unknown command", `{"protocol_version":1,"request_id":"a","command":"cancel"}`, false, false},
		{"shutdown event", env("shutdown", `{}`), true, true},
		{"protocol_error, null id", `{"protocol_version":1,"request_id":null,"seq":1,"type":"protocol_error","data":{"code":"invalid_json","message":"m"}}`, true, true},
		{"protocol_error, run code", env("protocol_error", `{"code":"canceled","message":"m"}`), true, false},
		{"final_result, run code", fr(`{"code":"canceled","message":"m"}`), true, true},
		{"final_result, no error", fr(`null`), true, true},
		{"final_result, protocol code", fr(`{"code":"invalid_json","message":"m"}`), true, false},
		{"final_result, message too long", fr(`{"code":"canceled","message":"` + strings.Repeat("m", 1025) + `"}`), true, false},
		{"data of another type", env("settled", `{"step":1,"channel":"text","text":"x"}`), true, false},
		{"unknown type", env("steer", `{}`), true, false},
		{"seq 0", `{"protocol_version":1,"request_id":"a","seq":0,"type":"shutdown","data":{}}`, true, false},
		{"no data", `{"protocol_version":1,"request_id":"a","seq":1,"type":"shutdown"}`, true, false},
		{"undocumented member (strict)", env("settled", `{"status":"completed","extra":1}`), true, false},
		{"model_delta", env("model_delta", `{"step":1,"channel":"reasoning","text":"x"}`), true, true},
		{"model_delta, bad channel", env("model_delta", `{"step":1,"channel":"audio","text":"x"}`), true, false},
		{"tool_start, raw arguments", env("tool_start", `{"step":1,"call_id":"c","tool":"read","arguments":"{oops"}`), true, true},
		{"tool_start, array arguments", env("tool_start", `{"step":1,"call_id":"c","tool":"read","arguments":[]}`), true, false},
	}
	for _, c := range cases {
		var err error
		if c.event {
			err = schematest.Event([]byte(c.line))
		} else {
			err = schematest.Request([]byte(c.line))
		}
		if (err == nil) != c.ok {
			t.Errorf("%s: valid = %v, want %v (%v)", c.name, err == nil, c.ok, err)
		}
	}
	// The published schema is open: the member strict validation refuses
	// is accepted.
	if err := schematest.EventOpen([]byte(env("settled", `{"status":"completed","extra":1}`))); err != nil {
		t.Errorf("open schema refuses an added member: %v", err)
	}
}

// TestRPCNotStale regenerates the RPC mode's schema in memory and compares
// it with the committed file and the embedded copy.
func TestRPCNotStale(t *testing.T) {
	want, err := generate.GenerateRPC("../../protocol")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(schema.RPCFileName)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./spec/schema", schema.RPCFileName)
	}
	if !bytes.Equal(schema.RPCJSON(), got) {
		t.Error("the embedded RPC schema differs from the file")
	}
}

// TestRPCDefinitions: every run event of protocol 1 has an RPC event
// definition under its RPC name, and the command schema takes exactly the
// lines the mode accepts.
func TestRPCDefinitions(t *testing.T) {
	var doc struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(schema.RPCJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range protocol.Events() {
		if e.Kind != protocol.KindLifecycle && e.Kind != protocol.KindStreaming {
			continue
		}
		name := rpc.EventType(e.Type)
		d := doc.Defs[generate.EventDef(name)]
		if d == nil {
			t.Errorf("event %s: no definition %s", name, generate.EventDef(name))
			continue
		}
		for p := range d["properties"].(map[string]any) {
			if strings.Contains(p, "_") {
				t.Errorf("event %s: member %s is not camelCase", name, p)
			}
		}
	}
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{`{"type":"prompt","message":"hi"}`, true},
		{`{"id":"1","type":"steer","message":"x"}`, true},
		{`{"type":"get_state"}`, true},
		{`{"id":"a","type":"new_session"}`, true},
		{`{"type":"prompt"}`, false},
		{`{"type":"prompt","message":""}`, false},
		{`{"type":"abort","message":"x"}`, false},
		{`{"type":"dance"}`, false},
		{`{"type":"get_state","extra":1}`, false},
		{`{"message":"hi"}`, false},
		{`[1]`, false},
	} {
		err := schematest.RPCCommand([]byte(c.line))
		if (err == nil) != c.ok {
			t.Errorf("%s: valid %v, want %v (%v)", c.line, err == nil, c.ok, err)
		}
	}
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{`{"type":"response","id":"1","command":"get_state","success":true,"data":{"model":"m","sessionId":"s","isRunning":false,"usageUncertain":false}}`, true},
		{`{"type":"response","command":"parse","success":false,"error":"not a JSON object"}`, true},
		{`{"type":"response","command":"get_state","success":true}`, false},
		{`{"type":"model_delta","runId":"r1","step":1,"channel":"text","text":"hi"}`, true},
		{`{"type":"model_delta","runId":"r1","step":1,"channel":"text","text":"hi","extra":1}`, false},
		{`{"type":"auto_retry_start","runId":"r1","attempt":1,"maxAttempts":null,"delayMs":10,"errorMessage":"503"}`, true},
		{`{"type":"provider_retry","runId":"r1","attempt":1,"maxAttempts":4,"delayMs":10,"errorMessage":"503"}`, false},
		{`{"type":"tool_start","runId":"r1","step":1,"callId":"c","tool":"read","arguments":{"path_name":1}}`, true},
		{`{"type":"tool_start","runId":"r1","step":1,"call_id":"c","tool":"read","arguments":{}}`, false},
	} {
		err := schematest.RPCLine([]byte(c.line))
		if (err == nil) != c.ok {
			t.Errorf("%s: valid %v, want %v (%v)", c.line, err == nil, c.ok, err)
		}
	}
}
