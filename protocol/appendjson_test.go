package protocol_test

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"pgregory.net/rapid"

	"octet.dev/host/protocol"
)

// TestModelDeltaAppendJSON checks the hand-written encoder against the
// reflective one for arbitrary text, including invalid UTF-8 and HTML.
func TestModelDeltaAppendJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := &protocol.ModelDelta{
			Step:    rapid.IntRange(-5, 1<<30).Draw(t, "step"),
			Channel: rapid.OneOf(rapid.SampledFrom([]string{protocol.ChannelText, protocol.ChannelReasoning}), rapid.String()).Draw(t, "channel"),
			Text:    string(rapid.SliceOf(rapid.Byte()).Draw(t, "text")) + rapid.String().Draw(t, "more") + "<&>\u2028",
		}
		type plain protocol.ModelDelta // no AppendJSON method
		want, err := json.Marshal((*plain)(d), jsontext.AllowInvalidUTF8(true))
		if err != nil {
			t.Fatal(err)
		}
		if got := d.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("AppendJSON\n got %s\nwant %s", got, want)
		}
	})
}
