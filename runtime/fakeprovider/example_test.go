package fakeprovider_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"octet.dev/host/runtime/fakeprovider"
)

// Example shows an application's CI test: start the fake, script the
// model's answers, point the application's provider route at BaseURL, and
// inject a fault to exercise its retry. Here a plain net/http client stands
// in for the application.
func Example() {
	srv, err := fakeprovider.New(fakeprovider.Options{
		Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
			{ToolCalls: []fakeprovider.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"go.mod"}`}}},
			{Text: "The module is octet.dev/host.", Usage: fakeprovider.Usage{Input: 40, Output: 8}},
		}},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	// In a real test: run the application with provider_mode
	// "openai-compatible" and base_url srv.BaseURL(fakeprovider.ModeChat).
	url := srv.BaseURL(fakeprovider.ModeChat) + "/chat/completions"
	ask := func() {
		body := `{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"hi"}]}`
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			fmt.Println("status", resp.StatusCode, "retry-after", resp.Header.Get("Retry-After"))
			return
		}
		var text, calls strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content   string
						ToolCalls []struct {
							Function struct{ Name, Arguments string }
						} `json:"tool_calls"`
					}
				}
			}
			if err := json.Unmarshal([]byte(data), &chunk); err != nil {
				panic(err)
			}
			for _, c := range chunk.Choices {
				text.WriteString(c.Delta.Content)
				for _, tc := range c.Delta.ToolCalls {
					calls.WriteString(tc.Function.Name + tc.Function.Arguments)
				}
			}
		}
		fmt.Printf("text %q, tool calls %q\n", text.String(), calls.String())
	}

	ask()
	srv.InjectFault(fakeprovider.FaultStatus{Code: 429, RetryAfter: "1"})
	ask() // the 429 consumes no turn ...
	ask() // ... so the retry gets the second one

	for _, r := range srv.Requests() {
		fmt.Printf("%s %s model=%s turn=%d fault=%q\n", r.Method, r.Path, r.Model(), r.Turn, r.Fault)
	}
	// Output:
	// text "", tool calls "read{\"path\":\"go.mod\"}"
	// status 429 retry-after 1
	// text "The module is octet.dev/host.", tool calls ""
	// POST /v1/chat/completions model=gpt-test turn=0 fault=""
	// POST /v1/chat/completions model=gpt-test turn=-1 fault="status(429)"
	// POST /v1/chat/completions model=gpt-test turn=1 fault=""
}
