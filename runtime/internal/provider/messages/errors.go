package messages

import "octet.dev/host/runtime/internal/provider/edge"

// errorFields reads an error envelope. Anthropic sends
// {"type":"error","error":{"type","message"},"request_id"}, whose error type
// is the code (e.g. "overloaded_error"); gateways in front of it may send an
// OpenAI-style {"error":{"message","type","code"}} or put the fields at the
// top level.
func errorFields(env *edge.ErrorEnvelope) (code, msg string) {
	if e := env.Error; e != nil {
		return e.TypeOrCode(), string(e.Message)
	}
	w := edge.ErrorObject{Message: env.Message, Code: env.Code}
	if env.Type != "error" {
		// The top-level "type":"error" only says what the body is.
		w.Type = env.Type
	}
	return w.TypeOrCode(), string(w.Message)
}
