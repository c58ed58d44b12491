package recovery_test

import (
	"fmt"
	"testing"

	"octet.dev/host/fsm/recovery"
	"octet.dev/host/protocol"
)

// Shorthands for the table.
var (
	wait  = recovery.Class{Kind: recovery.NetworkWait}
	retry = recovery.Class{Kind: recovery.Retry}
)

func fatalClass(code protocol.Code) recovery.Class {
	return recovery.Class{Kind: recovery.Fatal, Code: code}
}

func status(s int) recovery.Facts {
	return recovery.Facts{Kind: recovery.FailHTTPStatus, Status: s, RequestWritten: true}
}

func event(code string) recovery.Facts {
	return recovery.Facts{Kind: recovery.FailErrorEvent, Status: 200, Code: code, RequestWritten: true}
}

func with(f recovery.Facts, edit func(*recovery.Facts)) recovery.Facts {
	edit(&f)
	return f
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		f    recovery.Facts
		want recovery.Class
	}{
		// Network wait: a positively identified outage, nothing written.
		{"connect refused", recovery.Facts{Kind: recovery.FailConnect, Message: "connection refused"}, wait},
		{"dns failure", recovery.Facts{Kind: recovery.FailConnect, Message: "no such host"}, wait},
		{"connect with bytes written", recovery.Facts{Kind: recovery.FailConnect, RequestWritten: true}, retry},

		// Retryable statuses.
		{"408", status(408), retry},
		{"409", status(409), retry},
		{"425", status(425), retry},
		{"429", status(429), retry},
		{"429 rate_limit_exceeded", with(status(429), func(f *recovery.Facts) { f.Code = "rate_limit_exceeded" }), retry},
		{"429 with Retry-After", with(status(429), func(f *recovery.Facts) { f.RetryAfterMS = 2000 }), retry},
		{"500", status(500), retry},
		{"502", status(502), retry},
		{"503", status(503), retry},
		{"504", status(504), retry},
		{"529 overloaded", with(status(529), func(f *recovery.Facts) { f.Code = "overloaded_error" }), retry},
		{"599", status(599), retry},

		// Fatal statuses.
		{"400", status(400), fatalClass(recovery.CodeBadRequest)},
		{"422", status(422), fatalClass(recovery.CodeBadRequest)},
		{"401", status(401), fatalClass(recovery.CodeAuthFailed)},
		{"403", status(403), fatalClass(recovery.CodeAuthFailed)},
		{"402", status(402), fatalClass(recovery.CodeQuotaExhausted)},
		{"404", status(404), fatalClass(recovery.CodeNotFound)},
		{"413", status(413), fatalClass(recovery.CodeRequestTooLarge)},
		{"405", status(405), fatalClass(recovery.CodeProviderError)},
		{"410", status(410), fatalClass(recovery.CodeProviderError)},
		{"418", status(418), fatalClass(recovery.CodeProviderError)},
		{"451", status(451), fatalClass(recovery.CodeProviderError)},
		{"no status", status(0), fatalClass(recovery.CodeProviderError)},
		{"200 as a status failure", status(200), fatalClass(recovery.CodeProviderError)},
		{"301", status(301), fatalClass(recovery.CodeProviderError)},
		{"600", status(600), fatalClass(recovery.CodeProviderError)},

		// Codes decide whatever the status.
		{"429 insufficient_quota", with(status(429), func(f *recovery.Facts) { f.Code = "insufficient_quota" }), fatalClass(recovery.CodeQuotaExhausted)},
		{"429 free_quota_exceeded (Copilot)", with(status(429), func(f *recovery.Facts) { f.Code = "free_quota_exceeded" }), fatalClass(recovery.CodeQuotaExhausted)},
		{"429 overage_limit_reached (Copilot) with Retry-After", with(status(429), func(f *recovery.Facts) { f.Code = "overage_limit_reached"; f.RetryAfterMS = 60000 }), fatalClass(recovery.CodeQuotaExhausted)},
		{"429 insufficient_quota with Retry-After", with(status(429), func(f *recovery.Facts) { f.Code = "insufficient_quota"; f.RetryAfterMS = 1000 }), fatalClass(recovery.CodeQuotaExhausted)},
		{"403 billing_hard_limit_reached", with(status(403), func(f *recovery.Facts) { f.Code = "billing_hard_limit_reached" }), fatalClass(recovery.CodeQuotaExhausted)},
		{"quota code in upper case", with(status(429), func(f *recovery.Facts) { f.Code = " INSUFFICIENT_QUOTA " }), fatalClass(recovery.CodeQuotaExhausted)},
		{"400 context_length_exceeded", with(status(400), func(f *recovery.Facts) { f.Code = "context_length_exceeded" }), fatalClass(recovery.CodeContextOverflow)},
		{"500 context_length_exceeded", with(status(500), func(f *recovery.Facts) { f.Code = "context_length_exceeded" }), fatalClass(recovery.CodeContextOverflow)},
		{"400 model_context_window_exceeded", with(status(400), func(f *recovery.Facts) { f.Code = "model_context_window_exceeded" }), fatalClass(recovery.CodeContextOverflow)},
		{"400 context_window_exceeded", with(status(400), func(f *recovery.Facts) { f.Code = "context_window_exceeded" }), fatalClass(recovery.CodeContextOverflow)},
		{"400 prompt_too_long", with(status(400), func(f *recovery.Facts) { f.Code = "prompt_too_long" }), fatalClass(recovery.CodeContextOverflow)},
		{"anthropic 400 prompt is too long", with(status(400), func(f *recovery.Facts) {
			f.Code, f.Message = "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
		}), fatalClass(recovery.CodeContextOverflow)},
		{"openai 400 maximum context length", with(status(400), func(f *recovery.Facts) {
			f.Message = "This model's maximum context length is 128000 tokens."
		}), fatalClass(recovery.CodeContextOverflow)},
		{"413 exceeds the context window", with(status(413), func(f *recovery.Facts) {
			f.Message = "Your input exceeds the context window of this model."
		}), fatalClass(recovery.CodeContextOverflow)},
		{"400 other invalid request", with(status(400), func(f *recovery.Facts) {
			f.Code, f.Message = "invalid_request_error", "messages: field required"
		}), fatalClass(recovery.CodeBadRequest)},
		{"context message never makes a retry fatal", with(status(500), func(f *recovery.Facts) {
			f.Message = "context window service unavailable"
		}), retry},
		{"auth code does not override a retryable status", with(status(503), func(f *recovery.Facts) { f.Code = "invalid_api_key" }), retry},

		// Error events before the terminal event.
		{"event overloaded_error", event("overloaded_error"), retry},
		{"event api_error", event("api_error"), retry},
		{"event server_error", event("server_error"), retry},
		{"event rate_limit_exceeded", event("rate_limit_exceeded"), retry},
		{"event rate_limit_error", event("rate_limit_error"), retry},
		{"event without a code", event(""), retry},
		{"event unknown code", event("something_new"), retry},
		{"event after content", with(event("overloaded_error"), func(f *recovery.Facts) { f.ContentStarted = true }), retry},
		{"event insufficient_quota", event("insufficient_quota"), fatalClass(recovery.CodeQuotaExhausted)},
		{"event context_length_exceeded", event("context_length_exceeded"), fatalClass(recovery.CodeContextOverflow)},
		{"event invalid_request_error", event("invalid_request_error"), fatalClass(recovery.CodeBadRequest)},
		{"event invalid_prompt", event("invalid_prompt"), fatalClass(recovery.CodeBadRequest)},
		{"event invalid_request_error prompt too long", with(event("invalid_request_error"), func(f *recovery.Facts) {
			f.Message = "prompt is too long: 300000 tokens"
		}), fatalClass(recovery.CodeContextOverflow)},
		{"event authentication_error", event("authentication_error"), fatalClass(recovery.CodeAuthFailed)},
		{"event permission_error", event("permission_error"), fatalClass(recovery.CodeAuthFailed)},
		{"event invalid_api_key", event("invalid_api_key"), fatalClass(recovery.CodeAuthFailed)},
		{"event not_found_error", event("not_found_error"), fatalClass(recovery.CodeNotFound)},
		{"event model_not_found", event("model_not_found"), fatalClass(recovery.CodeNotFound)},
		{"event request_too_large", event("request_too_large"), fatalClass(recovery.CodeRequestTooLarge)},
		{"event carrying 503", with(event(""), func(f *recovery.Facts) { f.Status = 503 }), retry},
		{"event carrying 401", with(event(""), func(f *recovery.Facts) { f.Status = 401 }), fatalClass(recovery.CodeAuthFailed)},

		// Cuts, stalls, decoding, cancellation.
		{"stream cut before content", recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true}, retry},
		{"stream cut mid-body", recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true, ContentStarted: true}, retry},
		{"reset after headers", recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true, Message: "connection reset"}, retry},
		{"idle timeout", recovery.Facts{Kind: recovery.FailIdleTimeout, RequestWritten: true, ContentStarted: true}, retry},
		{"idle timeout before content", recovery.Facts{Kind: recovery.FailIdleTimeout, RequestWritten: true}, retry},
		{"decode", recovery.Facts{Kind: recovery.FailDecode, Status: 200, RequestWritten: true}, fatalClass(recovery.CodeProviderError)},
		{"decode mid-stream", recovery.Facts{Kind: recovery.FailDecode, RequestWritten: true, ContentStarted: true}, fatalClass(recovery.CodeProviderError)},
		{"canceled", recovery.Facts{Kind: recovery.FailCanceled, RequestWritten: true}, fatalClass(recovery.CodeCanceled)},
		{"canceled before sending", recovery.Facts{Kind: recovery.FailCanceled}, fatalClass(recovery.CodeCanceled)},
		{"canceled with a quota code", recovery.Facts{Kind: recovery.FailCanceled, Code: "insufficient_quota"}, fatalClass(recovery.CodeCanceled)},
		{"unknown kind", recovery.Facts{Kind: "teleport", RequestWritten: true}, fatalClass(recovery.CodeProviderError)},
		{"zero facts", recovery.Facts{}, fatalClass(recovery.CodeProviderError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recovery.Classify(tt.f); got != tt.want {
				t.Errorf("Classify(%+v) = %+v, want %+v", tt.f, got, tt.want)
			}
		})
	}
}

// TestClassifyTotal: every class has a code exactly when it is fatal, the
// code is one of the documented ones, and only FailConnect with nothing
// written waits for the network.
func TestClassifyTotal(t *testing.T) {
	kinds := []recovery.FailKind{
		recovery.FailConnect, recovery.FailHTTPStatus, recovery.FailStreamCut, recovery.FailIdleTimeout,
		recovery.FailErrorEvent, recovery.FailDecode, recovery.FailCanceled, "", "other",
	}
	codes := []string{"", "insufficient_quota", "context_length_exceeded", "invalid_request_error", "overloaded_error", "x"}
	fatalCodes := map[protocol.Code]bool{
		recovery.CodeAuthFailed: true, recovery.CodeBadRequest: true, recovery.CodeNotFound: true,
		recovery.CodeRequestTooLarge: true, recovery.CodeQuotaExhausted: true, recovery.CodeContextOverflow: true,
		recovery.CodeProviderError: true, recovery.CodeCanceled: true,
	}
	for _, k := range kinds {
		for s := 0; s <= 700; s++ {
			for _, c := range codes {
				for _, w := range []bool{false, true} {
					f := recovery.Facts{Kind: k, Status: s, Code: c, RequestWritten: w}
					got := recovery.Classify(f)
					switch got.Kind {
					case recovery.Fatal:
						if !fatalCodes[got.Code] {
							t.Fatalf("Classify(%+v) = %+v: undocumented code", f, got)
						}
					case recovery.Retry, recovery.NetworkWait:
						if got.Code != "" {
							t.Fatalf("Classify(%+v) = %+v: a code on a non-fatal class", f, got)
						}
					default:
						t.Fatalf("Classify(%+v) = %+v: unknown class", f, got)
					}
					if (got.Kind == recovery.NetworkWait) != (k == recovery.FailConnect && !w) {
						t.Fatalf("Classify(%+v) = %+v", f, got)
					}
				}
			}
		}
	}
}

func TestUsageUncertain(t *testing.T) {
	tests := []struct {
		f    recovery.Facts
		want bool
	}{
		// Nothing written: nothing billed.
		{recovery.Facts{Kind: recovery.FailConnect}, false},
		{recovery.Facts{Kind: recovery.FailStreamCut, ContentStarted: true}, false}, // inconsistent facts: written decides
		{recovery.Facts{Kind: recovery.FailCanceled}, false},
		// Content decoded: the model ran, and the final usage never came.
		{recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true, ContentStarted: true}, true},
		{recovery.Facts{Kind: recovery.FailIdleTimeout, RequestWritten: true, ContentStarted: true}, true},
		{with(event("overloaded_error"), func(f *recovery.Facts) { f.ContentStarted = true }), true},
		{with(event("context_length_exceeded"), func(f *recovery.Facts) { f.ContentStarted = true }), true},
		{recovery.Facts{Kind: recovery.FailDecode, RequestWritten: true, ContentStarted: true}, true},
		{recovery.Facts{Kind: recovery.FailCanceled, RequestWritten: true, ContentStarted: true}, true},
		// Written, no answer in full: the provider may have run the model.
		{recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true}, true},
		{recovery.Facts{Kind: recovery.FailIdleTimeout, RequestWritten: true}, true},
		{recovery.Facts{Kind: recovery.FailCanceled, RequestWritten: true}, true},
		{recovery.Facts{Kind: recovery.FailConnect, RequestWritten: true}, true},
		{recovery.Facts{Kind: "other", RequestWritten: true}, true},
		// Statuses: 5xx other than 503 and 529 may come after the model ran.
		{status(500), true},
		{status(502), true},
		{status(504), true},
		{status(599), true},
		{status(503), false},
		{status(529), false},
		{status(429), false},
		{status(408), false},
		{status(409), false},
		{status(400), false},
		{status(401), false},
		{status(403), false},
		{status(404), false},
		{status(413), false},
		{status(422), false},
		// Error events and undecodable answers before any content.
		{event("overloaded_error"), false},
		{event("server_error"), false},
		{event("insufficient_quota"), false},
		{recovery.Facts{Kind: recovery.FailDecode, Status: 200, RequestWritten: true}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s_%d_%s_w%v_c%v", tt.f.Kind, tt.f.Status, tt.f.Code, tt.f.RequestWritten, tt.f.ContentStarted), func(t *testing.T) {
			if got := recovery.UsageUncertain(tt.f); got != tt.want {
				t.Errorf("UsageUncertain(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
}
