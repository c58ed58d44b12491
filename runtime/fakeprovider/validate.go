package fakeprovider

import "strings"

// validate checks the basics of a model request: a JSON object with a
// model, stream true, and the members each API requires.
func validate(mode Mode, raw []byte, body map[string]any, decodeErr error) *apiError {
	fail := func(param, msg string) *apiError {
		e := invalidRequest(param, msg)
		return &e
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return fail("", "The request body is empty; expected a JSON object.")
	}
	if decodeErr != nil || body == nil {
		return fail("", "We could not parse the JSON body of your request: expected a JSON object.")
	}
	if m, ok := body["model"].(string); !ok || m == "" {
		return fail("model", "model: a non-empty string is required.")
	}
	if st, _ := body["stream"].(bool); !st {
		return fail("stream", `stream: this fake serves streaming requests only; set "stream": true.`)
	}
	switch mode {
	case ModeChat:
		if _, ok := body["messages"].([]any); !ok {
			return fail("messages", "messages: an array is required.")
		}
	case ModeAnthropic:
		if _, ok := body["messages"].([]any); !ok {
			return fail("messages", "messages: Field required")
		}
		if mt, ok := body["max_tokens"].(float64); !ok || mt < 1 {
			return fail("max_tokens", "max_tokens: Field required (a positive integer)")
		}
	}
	return nil
}

// includeUsage reports stream_options.include_usage.
func includeUsage(body map[string]any) bool {
	so, _ := body["stream_options"].(map[string]any)
	v, _ := so["include_usage"].(bool)
	return v
}

// wantsEncrypted reports whether include names reasoning.encrypted_content.
func wantsEncrypted(body map[string]any) bool {
	inc, _ := body["include"].([]any)
	for _, v := range inc {
		if v == "reasoning.encrypted_content" {
			return true
		}
	}
	return false
}
