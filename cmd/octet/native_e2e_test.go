package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/runtime/fakeprovider"
)

// TestRPCNativeSteer: the rpc mode's steer command on a catalog route
// qualified for native steering (openai-responses over WebSocket,
// "native_steering": true) goes into the live response as response.steer;
// the successor's answer ends the run, and steering_delivered says
// "native".
func TestRPCNativeSteer(t *testing.T) {
	e := newEnv(t,
		fakeprovider.Turn{Text: "I will indent with spaces everywhere", Steer: &fakeprovider.Steer{}},
		fakeprovider.Turn{Text: "Tabs it is."})
	if err := os.MkdirAll(filepath.Join(e.home, ".octet"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := `{"providers":{"lab":{"base_url":"` + e.fake.BaseURL(fakeprovider.ModeResponses) + `","provider_mode":"openai-responses","transport":"websocket",` +
		`"models":[{"id":"lab-model","context_window_tokens":32768,"max_output_tokens":4096,"native_steering":true}]}}}`
	if err := os.WriteFile(filepath.Join(e.home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := e.command("--mode", "rpc", "--model", "lab-model", "--workspace", e.ws)
	p, _ := startRPC(t, cmd)

	p.send(`{"type":"prompt","message":"indent the file"}`)
	p.response("prompt")
	p.until("model_delta") // the fake waits for the steer from here on
	p.send(`{"id":"st","type":"steer","message":"use tabs"}`)
	if r, _ := p.response("steer"); r["success"] != true {
		t.Fatalf("steer: %v", r)
	}
	sd, _ := p.until("steering_delivered")
	if sd["text"] != "use tabs" || sd["mode"] != "native" || sd["step"] != 2.0 {
		t.Fatalf("steering_delivered: %v", sd)
	}
	final, _ := p.until("final_result")
	if final["status"] != "completed" || final["output"] != "Tabs it is." {
		t.Fatalf("final: %v", final)
	}
	var steers, creates int
	for _, r := range e.fake.Requests() {
		if r.Method != fakeprovider.MethodMessage {
			continue
		}
		switch r.Body["type"] {
		case "response.steer":
			steers++
			if r.Body["input"] != "use tabs" {
				t.Errorf("steer frame %v", r.Body)
			}
		case "response.create":
			creates++
			if b, _ := json.Marshal(r.Body); strings.Contains(string(b), "use tabs") {
				t.Errorf("the input went out in a response.create: %s", b)
			}
		}
	}
	if steers != 1 || creates != 1 {
		t.Fatalf("%d steer frames, %d creates", steers, creates)
	}
	if code := p.close(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
