package responses

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/provider"
)

// TestToolArrayBytes: the size reported for the budget is the size of the
// tools member of a real request body, byte for byte.
func TestToolArrayBytes(t *testing.T) {
	specs := []provider.ToolSpec{
		{Name: "read", Description: "Read a file <with> \"quotes\" & more", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "noop"},
	}
	req := provider.Request{Model: "m", MaxOutputTokens: 100, Messages: []provider.Message{{Role: provider.RoleUser, Text: "hi"}}, Tools: specs}
	body, err := buildRequest(req, requestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tools jsontext.Value `json:"tools"`
	}
	if err := json.Unmarshal(body, &got, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	var p *Provider
	n, err := p.ToolArrayBytes(specs)
	if err != nil || n != len(got.Tools) || n == 0 {
		t.Errorf("ToolArrayBytes = %d, %v; the body's tools member is %d bytes: %s", n, err, len(got.Tools), got.Tools)
	}
	if n, err := p.ToolArrayBytes(nil); n != 0 || err != nil {
		t.Errorf("no tools: %d, %v", n, err)
	}
	if _, err := p.ToolArrayBytes([]provider.ToolSpec{{Name: "bad", Parameters: []byte("{")}}); err == nil {
		t.Error("invalid parameters JSON: no error")
	}
}
