package protocol

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// AppendJSON appends h's JSON object to b. hello is the first answer a
// client waits for after spawning the host, so it encodes itself: the
// reflective encoder would first build its field tables, which costs more
// than the rest of the answer. The result equals the encoding of h's json
// tags (appendjson_test.go checks it).
func (h *Hello) AppendJSON(b []byte) []byte {
	b = append(b, `{"sdk_version":`...)
	b, _ = jsontext.AppendQuote(b, h.SDKVersion) // invalid UTF-8 becomes U+FFFD
	b = append(b, `,"protocol_version":`...)
	b = strconv.AppendInt(b, int64(h.ProtocolVersion), 10)
	b = append(b, `,"max_frame_bytes":`...)
	b = strconv.AppendInt(b, int64(h.MaxFrameBytes), 10)
	b = append(b, `,"max_concurrent_runs":`...)
	b = strconv.AppendInt(b, int64(h.MaxConcurrentRuns), 10)
	b = append(b, `,"commands":`...)
	if h.Commands == nil {
		b = append(b, "[]"...)
	} else {
		b = append(b, '[')
		for i, c := range h.Commands {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = jsontext.AppendQuote(b, c)
		}
		b = append(b, ']')
	}
	b = append(b, `,"features":`...)
	return h.Features.appendJSON(b)
}

func (f *Features) appendJSON(b []byte) []byte {
	flags := [...]struct {
		name string
		on   bool
	}{
		{`{"streaming":`, f.Streaming},
		{`,"persistent_sessions":`, f.PersistentSessions},
		{`,"seed_history":`, f.SeedHistory},
		{`,"typed_media_input":`, f.TypedMediaInput},
		{`,"typed_image_input":`, f.TypedImageInput},
		{`,"typed_audio_input":`, f.TypedAudioInput},
		{`,"prompt_display_text":`, f.PromptDisplayText},
		{`,"inline_models":`, f.InlineModels},
		{`,"tools":`, f.Tools},
		{`,"skills":`, f.Skills},
		{`,"extensions":`, f.Extensions},
		{`,"process_group_abort":`, f.ProcessGroupAbort},
		{`,"in_band_abort":`, f.InBandAbort},
		{`,"max_steps":`, f.MaxSteps},
		{`,"reasoning":`, f.Reasoning},
	}
	for _, fl := range flags {
		b = append(b, fl.name...)
		b = strconv.AppendBool(b, fl.on)
	}
	return append(b, "}}"...)
}
