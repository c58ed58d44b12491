package protocol_test

import (
	"reflect"
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

// TestHelloAppendJSON checks hello's hand-written encoder against the
// reflective one, for arbitrary versions, commands and feature flags.
func TestHelloAppendJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		flags := rapid.SliceOfN(rapid.Bool(), 15, 15).Draw(t, "flags")
		h := &protocol.Hello{
			SDKVersion:        rapid.String().Draw(t, "version") + string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")),
			ProtocolVersion:   rapid.Int().Draw(t, "protocol"),
			MaxFrameBytes:     rapid.Int().Draw(t, "frame"),
			MaxConcurrentRuns: rapid.Int().Draw(t, "runs"),
			Commands:          rapid.SliceOf(rapid.String()).Draw(t, "commands"),
			Features: protocol.Features{
				Streaming: flags[0], PersistentSessions: flags[1], SeedHistory: flags[2], TypedMediaInput: flags[3],
				TypedImageInput: flags[4], TypedAudioInput: flags[5], PromptDisplayText: flags[6], InlineModels: flags[7],
				Tools: flags[8], Skills: flags[9], Extensions: flags[10], ProcessGroupAbort: flags[11],
				InBandAbort: flags[12], MaxSteps: flags[13], Reasoning: flags[14],
			},
		}
		if rapid.Bool().Draw(t, "nil commands") {
			h.Commands = nil
		}
		type plain protocol.Hello // no AppendJSON method
		want, err := json.Marshal((*plain)(h), jsontext.AllowInvalidUTF8(true), jsontext.EscapeForHTML(false))
		if err != nil {
			t.Fatal(err)
		}
		if got := h.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("AppendJSON\n got %s\nwant %s", got, want)
		}
	})
}

// TestFeaturesEncodedWhole fails when Features gains a field that Hello's
// AppendJSON does not write.
func TestFeaturesEncodedWhole(t *testing.T) {
	all := protocol.Features{}
	v := reflect.ValueOf(&all).Elem()
	for i := range v.NumField() {
		v.Field(i).SetBool(true)
	}
	h := protocol.Hello{Features: all}
	type plain protocol.Hello
	want, _ := json.Marshal((*plain)(&h))
	if got := h.AppendJSON(nil); string(got) != string(want) {
		t.Fatalf("AppendJSON\n got %s\nwant %s", got, want)
	}
}
