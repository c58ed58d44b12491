package chat

import (
	"context"
	"strings"
	"testing"

	"octet.dev/host/runtime/internal/provider/edge/edgetest"
)

// TestAbsurdUsageIsNoReport: a usage chunk with a negative or absurd count
// (beyond 10^12) reaches the runtime as no report at all (no EventUsage);
// a plausible one is unchanged.
func TestAbsurdUsageIsNoReport(t *testing.T) {
	for _, tc := range []struct {
		name, usage string
		reported    bool
	}{
		{"plausible", `{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}`, true},
		{"negative", `{"prompt_tokens":-100,"completion_tokens":10,"total_tokens":-90}`, false},
		{"beyond 10^12", `{"prompt_tokens":1000000000001,"completion_tokens":10}`, false},
		{"MaxInt64", `{"prompt_tokens":9223372036854775807,"completion_tokens":1}`, false},
		{"negative reasoning", `{"prompt_tokens":1,"completion_tokens":1,"completion_tokens_details":{"reasoning_tokens":-1}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := oneTextChunk + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
				`data: {"choices":[],"usage":` + tc.usage + "}\n\ndata: [DONE]\n\n"
			srv := edgetest.NewServer(t, edgetest.SSEHandler([]byte(body)))
			p := testProvider(t, srv, nil)
			s, err := p.Stream(context.Background(), simpleRequest)
			if err != nil {
				t.Fatal(err)
			}
			sum, _, err := drain(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if (sum.Usage != nil) != tc.reported {
				t.Fatalf("usage %+v; want reported %v", sum.Usage, tc.reported)
			}
			if tc.reported && (sum.Usage.InputTokens != 100 || sum.Usage.TotalTokens != 110) {
				t.Fatalf("usage %+v", sum.Usage)
			}
			if !strings.HasPrefix(sum.Text, "Hel") {
				t.Fatalf("text %q", sum.Text)
			}
		})
	}
}
