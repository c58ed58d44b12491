package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
)

// Small real-format payloads: the host sniffs signatures, not extensions.
var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR one")
	jpegBytes = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00 two")
	wavBytes  = []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00 theme")
	flacBytes = []byte("fLaC\x00\x00\x00\x22 clip")
)

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// userContent returns the content of the last user message of a recorded
// request body, in the shape of its wire mode.
func userContent(t *testing.T, body map[string]any, key string) []any {
	t.Helper()
	var msgs []map[string]any
	if err := json.Unmarshal(mustJSON(t, body[key]), &msgs); err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i]["role"] == "user" {
			c, _ := msgs[i]["content"].([]any)
			return c
		}
	}
	t.Fatalf("no user message in %v", body)
	return nil
}

func dataURL(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// TestRunMediaInOrderAndAcrossResume: two images around an audio clip (the
// source's example, absolute paths inside the workspace) reach an OpenAI Chat
// audio route as the original bytes, in request order, after the prompt. The
// session keeps references and the bytes beside it, so a resumed run in a
// new host process sends them again after the workspace files are gone.
func TestRunMediaInOrderAndAcrossResume(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "a moody theme"}, {Text: "still moody"}}})
	one, theme, two := filepath.Join(e.ws, "moodboard", "one.png"), filepath.Join(e.ws, "music", "theme.wav"), filepath.Join(e.ws, "moodboard", "two.jpg")
	writeFile(t, one, pngBytes)
	writeFile(t, theme, wavBytes)
	writeFile(t, two, jpegBytes)
	str := func(s string) *string { return &s }
	req := e.runReq("run-media", "Compare the references and describe the music.")
	req.SessionID = str("media-session")
	req.InputModalities = &[]string{"image", "audio"}
	req.Media = []protocol.Media{{Type: "image", Path: one}, {Type: "audio", Path: theme}, {Type: "image", Path: "moodboard/two.jpg"}}
	_, final := e.run(e.c, req)
	if final.Status != "completed" {
		t.Fatalf("final %+v %+v", final, final.Error)
	}
	want := []any{
		map[string]any{"type": "text", "text": "Compare the references and describe the music."},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL("image/png", pngBytes)}},
		map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": base64.StdEncoding.EncodeToString(wavBytes), "format": "wav"}},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": dataURL("image/jpeg", jpegBytes)}},
	}
	if diff := cmp.Diff(want, userContent(t, e.fake.Requests()[0].Body, "messages")); diff != "" {
		t.Errorf("user content (-want +got):\n%s", diff)
	}

	// The session holds references, never bytes; the bytes sit beside it.
	data, _ := os.ReadFile(*final.SessionFile)
	if strings.Contains(string(data), base64.StdEncoding.EncodeToString(wavBytes)) || strings.Contains(string(data), "theme") && strings.Contains(string(data), "WAVE") {
		t.Error("media bytes in the session file")
	}
	if n := strings.Count(string(data), `"sha256"`); n != 3 {
		t.Errorf("%d media references in the session, want 3", n)
	}
	objs, _ := os.ReadDir(strings.TrimSuffix(*final.SessionFile, ".jsonl") + ".media")
	if len(objs) != 3 {
		t.Errorf("%d media objects beside the session, want 3", len(objs))
	}

	// Resume in a new process with the workspace files gone.
	e.c.Close()
	os.RemoveAll(filepath.Join(e.ws, "moodboard"))
	os.RemoveAll(filepath.Join(e.ws, "music"))
	c2 := e.start()
	req = e.runReq("run-2", "And the second image?")
	req.SessionID = str("media-session")
	req.InputModalities = &[]string{"image", "audio"}
	if _, final := e.run(c2, req); final.Status != "completed" {
		t.Fatalf("resumed: %+v %+v", final, final.Error)
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	json.Unmarshal(mustJSON(t, e.fake.Requests()[1].Body), &body)
	if len(body.Messages) < 2 {
		t.Fatalf("resumed request %+v", body)
	}
	if diff := cmp.Diff(want, body.Messages[1]["content"]); diff != "" {
		t.Errorf("resumed request's first user message (-want +got):\n%s", diff)
	}
}

// TestRunMediaOtherModes: images reach the Responses and Messages wires in
// their shapes, from the original bytes.
func TestRunMediaOtherModes(t *testing.T) {
	for _, tc := range []struct {
		mode fakeprovider.Mode
		key  string
		want []any
	}{
		{fakeprovider.ModeResponses, "input", []any{
			map[string]any{"type": "input_text", "text": "Describe."},
			map[string]any{"type": "input_image", "image_url": dataURL("image/png", pngBytes), "detail": "auto"},
		}},
		{fakeprovider.ModeAnthropic, "messages", []any{
			map[string]any{"type": "text", "text": "Describe."},
			// The last block of the newest user turn is a cache breakpoint.
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": base64.StdEncoding.EncodeToString(pngBytes)},
				"cache_control": map[string]any{"type": "ephemeral"}},
		}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "a picture"}}})
			writeFile(t, filepath.Join(e.ws, "a.png"), pngBytes)
			req := e.modeReq(tc.mode, "run-1", "Describe.")
			req.InputModalities = &[]string{"image"}
			req.Media = []protocol.Media{{Type: "image", Path: "a.png"}}
			if _, final := e.run(e.c, req); final.Status != "completed" {
				t.Fatalf("final %+v %+v", final, final.Error)
			}
			if diff := cmp.Diff(tc.want, userContent(t, e.fake.Requests()[0].Body, tc.key)); diff != "" {
				t.Errorf("user content (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunMediaRefusals: every media rule refuses the run with one
// final_result and a specific code, before anything is accepted or any
// request is sent; the host serves on.
func TestRunMediaRefusals(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "ok"}}})
	ws := e.ws
	writeFile(t, filepath.Join(ws, "a.png"), pngBytes)
	writeFile(t, filepath.Join(ws, "clip.wav"), wavBytes)
	writeFile(t, filepath.Join(ws, "clip.flac"), flacBytes)
	writeFile(t, filepath.Join(ws, "notes.png"), []byte("not an image"))
	outside := filepath.Join(t.TempDir(), "secret.png")
	writeFile(t, outside, pngBytes)
	os.Symlink(outside, filepath.Join(ws, "link.png"))
	big := make([]byte, 5<<20+1)
	copy(big, pngBytes)
	writeFile(t, filepath.Join(ws, "big.png"), big)
	nearly := make([]byte, 4<<20+1<<19) // 4.5 MiB: five add up past 20 MiB
	copy(nearly, pngBytes)
	writeFile(t, filepath.Join(ws, "nearly.png"), nearly)

	image := func(p string) protocol.Media { return protocol.Media{Type: "image", Path: p} }
	for _, tc := range []struct {
		name       string
		mode       fakeprovider.Mode
		modalities []string
		media      []protocol.Media
		code, says string
	}{
		{"image on a text-only route", fakeprovider.ModeChat, nil, []protocol.Media{image("a.png")}, "media_unsupported", "does not accept image input"},
		{"audio on a Responses route", fakeprovider.ModeResponses, []string{"image", "audio"}, []protocol.Media{{Type: "audio", Path: "clip.wav"}}, "media_unsupported", "does not accept audio input"},
		{"audio the route cannot take", fakeprovider.ModeChat, []string{"audio"}, []protocol.Media{{Type: "audio", Path: "clip.flac"}}, "media_unsupported", "flac audio; the route accepts only wav and mp3"},
		{"unknown type", fakeprovider.ModeChat, []string{"image"}, []protocol.Media{{Type: "video", Path: "a.png"}}, "media_invalid", `media[0].type must be "image" or "audio"`},
		{"link", fakeprovider.ModeChat, []string{"image"}, []protocol.Media{image("link.png")}, "media_invalid", "symbolic link"},
		{"outside", fakeprovider.ModeChat, []string{"image"}, []protocol.Media{image(outside)}, "media_invalid", "outside the workspace"},
		{"missing", fakeprovider.ModeChat, []string{"image"}, []protocol.Media{image("a.png"), image("gone.png")}, "media_invalid", `media[1] "gone.png": does not exist`},
		{"not an image", fakeprovider.ModeChat, []string{"image"}, []protocol.Media{image("notes.png")}, "media_invalid", "is not a PNG"},
		{"declared image, holds audio", fakeprovider.ModeChat, []string{"image"}, []protocol.Media{image("clip.wav")}, "media_invalid", "declared image but holds audio"},
		{"one image too large", fakeprovider.ModeChat, []string{"image"}, []protocol.Media{image("big.png")}, "media_too_large", "at most 5242880"},
		{"images too large together", fakeprovider.ModeChat, []string{"image"},
			[]protocol.Media{image("nearly.png"), image("nearly.png"), image("nearly.png"), image("nearly.png"), image("nearly.png")},
			"media_too_large", "images add up to more than 20971520 bytes (at media[4])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := e.modeReq(tc.mode, "run-x", "look")
			if tc.modalities != nil {
				req.InputModalities = &tc.modalities
			}
			req.Media = tc.media
			evs, final := e.run(e.c, req)
			if len(evs) != 1 || final.Status != "error" || final.Error == nil || string(final.Error.Code) != tc.code || !strings.Contains(final.Error.Message, tc.says) {
				t.Fatalf("events %s, final %+v %+v; want %s saying %q", eventTypes(evs), final, final.Error, tc.code, tc.says)
			}
			if strings.Contains(final.Error.Message, filepath.Dir(outside)) {
				t.Errorf("the message names a host path outside the workspace: %s", final.Error.Message)
			}
		})
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("%d provider requests for refused runs", n)
	}
	if _, final := e.run(e.c, e.runReq("run-ok", "still serving")); final.Status != "completed" {
		t.Errorf("after the refusals: %+v", final)
	}
}

// TestRunOutputMediaFrame: a generated image of 3 MiB (one SSE line, the
// item's output_format lying) reaches the client as one small output_media
// frame naming the stored file; the bytes never cross a frame.
func TestRunOutputMediaFrame(t *testing.T) {
	img := append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte("0123456789abcdef"), 3<<16)...)
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{{
		Images: []fakeprovider.Image{{Data: img, OutputFormat: "png", Partials: [][]byte{pngBytes}}},
		Text:   "drawn",
	}}})
	evs, final := e.run(e.c, e.modeReq(fakeprovider.ModeResponses, "run-image", "draw"))
	if final.Status != "completed" {
		t.Fatalf("final %+v %+v", final, final.Error)
	}
	var frames []protocol.OutputMedia
	for _, ev := range evs {
		if len(ev.Data) > 64<<10 {
			t.Fatalf("%s frame of %d bytes", ev.Type, len(ev.Data))
		}
		if ev.Type == protocol.TypeOutputMedia {
			var m protocol.OutputMedia
			if err := ev.DecodeInto(&m); err != nil {
				t.Fatal(err)
			}
			frames = append(frames, m)
		}
	}
	if len(frames) != 1 {
		t.Fatalf("%d output_media frames", len(frames))
	}
	m := frames[0]
	stored, err := os.ReadFile(m.Path)
	if m.Type != "image" || m.MimeType != "image/jpeg" || m.Bytes != int64(len(img)) || err != nil || !bytes.Equal(stored, img) ||
		filepath.Dir(m.Path) != strings.TrimSuffix(*final.SessionFile, ".jsonl")+".media" {
		t.Fatalf("output_media %+v (%v)", m, err)
	}
}
