package runtime_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

// noise returns n reproducible bytes that do not compress, after prefix.
func noise(prefix string, n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, len(prefix)+n)
	copy(b, prefix)
	for i := len(prefix); i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

const (
	pngSig  = "\x89PNG\r\n\x1a\n"
	jpegSig = "\xff\xd8\xff\xe0\x00\x10JFIF\x00"
)

// mediaRun runs one prompt on route against the fake and returns its
// events, result and session folder.
func mediaRun(t *testing.T, home string, req runtime.RunRequest) ([]runtime.Event, protocol.FinalResult) {
	t.Helper()
	agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" },
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := agent.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var evs []runtime.Event
	for ev := range rc.Events() {
		evs = append(evs, ev)
	}
	return evs, rc.Wait()
}

func outputMedia(evs []runtime.Event) []*protocol.OutputMedia {
	var out []*protocol.OutputMedia
	for _, ev := range evs {
		if m, ok := ev.Data.(*protocol.OutputMedia); ok {
			out = append(out, m)
		}
	}
	return out
}

// checkStored checks that m names a stored file holding want, in the
// session's media folder, and that the folder holds nothing else than the
// wanted objects (no temporary file, no orphan).
func checkStored(t *testing.T, sessionFile string, m *protocol.OutputMedia, want []byte, objects int) {
	t.Helper()
	sum := sha256.Sum256(want)
	dir := strings.TrimSuffix(sessionFile, ".jsonl") + ".media"
	if m.SHA256 != hex.EncodeToString(sum[:]) || m.Bytes != int64(len(want)) || m.Path != filepath.Join(dir, m.SHA256) {
		t.Fatalf("output_media %+v (media folder %s)", m, dir)
	}
	got, err := os.ReadFile(m.Path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("stored %d bytes, %v", len(got), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != objects {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("media folder holds %q, want %d objects", names, objects)
	}
}

// noBytesInFrames checks that no event carries media bytes: each event's
// JSON is small and holds no piece of the base64 of any of imgs.
func noBytesInFrames(t *testing.T, evs []runtime.Event, imgs ...[]byte) {
	t.Helper()
	for _, ev := range evs {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 64<<10 {
			t.Fatalf("%s event of %d bytes", ev.Type, len(data))
		}
		for _, img := range imgs {
			b64 := base64.StdEncoding.EncodeToString(img[1000:1400])
			if bytes.Contains(data, []byte(b64[8:200])) {
				t.Fatalf("%s event carries media bytes", ev.Type)
			}
		}
	}
}

// A generated image of 3 MiB comes in one SSE line: it is stored beside the
// session and announced by output_media with its path, sniffed MIME type,
// size and digest; partial images and the copy response.completed
// repeats leave nothing; a JPEG declared png is image/jpeg; the session
// records typed references.
func TestOutputMediaImage(t *testing.T) {
	big := noise(pngSig, 3<<20, 1)
	jpeg := noise(jpegSig, 20<<10, 2)
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{
		Images: []fakeprovider.Image{
			{Data: big, Partials: [][]byte{noise(pngSig, 1<<20, 3), noise(pngSig, 100, 4)}},
			{Data: jpeg, OutputFormat: "png"},
		},
		Text: "Here they are.",
	}, {Text: "Again."}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	home := t.TempDir()
	evs, res := mediaRun(t, home, runtime.RunRequest{RunID: "run-1", Workspace: t.TempDir(), Model: "m", Prompt: "draw",
		SessionDir: filepath.Join(home, "sessions"), SessionID: "images",
		Route: &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(fakeprovider.ModeResponses), Mode: string(fakeprovider.ModeResponses)}})
	if res.Status != "completed" || res.Output != "Here they are." {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	ms := outputMedia(evs)
	if len(ms) != 2 || ms[0].Step != 1 || ms[0].Type != "image" || ms[0].MimeType != "image/png" || ms[1].MimeType != "image/jpeg" {
		t.Fatalf("output_media %+v", ms)
	}
	checkStored(t, *res.SessionFile, ms[0], big, 2)
	checkStored(t, *res.SessionFile, ms[1], jpeg, 2)
	noBytesInFrames(t, evs, big, jpeg)
	// output_media comes before the step's model_step.
	var order []string
	for _, ev := range evs {
		if ev.Type == protocol.TypeOutputMedia || ev.Type == protocol.TypeModelStep {
			order = append(order, string(ev.Type))
		}
	}
	if strings.Join(order, ",") != "output_media,output_media,model_step" {
		t.Fatalf("order %v", order)
	}
	session, _ := os.ReadFile(*res.SessionFile)
	if !bytes.Contains(session, []byte(`"output_media":[{"type":"image","mime_type":"image/png","format":"png","sha256":"`+ms[0].SHA256)) ||
		bytes.Contains(session, []byte(base64.StdEncoding.EncodeToString(big[:3000])[8:100])) {
		t.Fatal("the session does not record the reference, or records bytes")
	}
	// The session resumes; the images are not sent back to the model.
	_, res = mediaRun(t, home, runtime.RunRequest{RunID: "run-2", Workspace: t.TempDir(), Model: "m", Prompt: "again",
		SessionDir: filepath.Join(home, "sessions"), SessionID: "images",
		Route: &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(fakeprovider.ModeResponses), Mode: string(fakeprovider.ModeResponses)}})
	reqs := fake.Requests()
	if res.Status != "completed" || len(reqs) != 2 || bytes.Contains(reqs[1].RawBody, []byte(base64.StdEncoding.EncodeToString(jpeg[:300])[:64])) ||
		!bytes.Contains(reqs[1].RawBody, []byte("Here they are.")) {
		t.Fatalf("resumed run %+v, %d requests", res, len(reqs))
	}
}

// A stream cut after the image's output_item.done is retried: the failed
// attempt's image, partial and final, leaves no file, and only the
// committed attempt's image is announced and stored.
func TestOutputMediaRetryLeavesNoOrphan(t *testing.T) {
	img := noise(pngSig, 300<<10, 5)
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{
		Images: []fakeprovider.Image{{Data: img, Partials: [][]byte{noise(pngSig, 300<<10, 6)}}},
		Text:   "Done.",
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	// created, in_progress, item added, generating x2, partial, completed,
	// item done: cut right after the image, before the message.
	fake.InjectFault(fakeprovider.FaultCutMidStream{AfterEvents: 8})
	home := t.TempDir()
	evs, res := mediaRun(t, home, runtime.RunRequest{RunID: "run-1", Workspace: t.TempDir(), Model: "m", Prompt: "draw",
		SessionDir: filepath.Join(home, "sessions"), SessionID: "retry",
		Route: &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(fakeprovider.ModeResponses), Mode: string(fakeprovider.ModeResponses)}})
	if res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	retries := 0
	for _, ev := range evs {
		if ev.Type == protocol.TypeProviderRetry {
			retries++
		}
	}
	ms := outputMedia(evs)
	if retries != 1 || len(ms) != 1 || len(fake.Requests()) != 2 {
		t.Fatalf("%d retries, %d output_media, %d requests", retries, len(ms), len(fake.Requests()))
	}
	checkStored(t, *res.SessionFile, ms[0], img, 1)
}

// Audio output on a configured Chat route that declares it: the request
// asks for it as the API requires, the transcript is the answer, the audio
// (raw PCM16, which has no signature) is stored and announced as
// audio/pcm.
func TestOutputMediaAudio(t *testing.T) {
	pcm := noise("", 200<<10, 7)
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{
		AudioTranscript: "Hello from the fake.", Audio: pcm,
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".octet", "credentials"), 0o700)
	cfg := `{"providers":{"voice":{"base_url":"` + fake.BaseURL(fakeprovider.ModeChat) + `","provider_mode":"openai-compatible",` +
		`"models":[{"id":"talker","context_window_tokens":32768,"max_output_tokens":4096,"input_modalities":["text","audio"],"output_modalities":["text","audio"]}]}}}`
	os.WriteFile(filepath.Join(home, ".octet", "models.json"), []byte(cfg), 0o600)
	os.WriteFile(filepath.Join(home, ".octet", "credentials", "voice.json"), []byte(`{"api_key":"voice-key"}`), 0o600)
	evs, res := mediaRun(t, home, runtime.RunRequest{RunID: "run-1", Workspace: t.TempDir(), Model: "talker", Prompt: "say hello",
		SessionDir: filepath.Join(home, "sessions"), SessionID: "audio"})
	if res.Status != "completed" || res.Output != "Hello from the fake." {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	body := fake.Requests()[0].Body
	mods, _ := json.Marshal(body["modalities"])
	audio, _ := json.Marshal(body["audio"])
	if string(mods) != `["text","audio"]` || string(audio) != `{"format":"pcm16","voice":"alloy"}` {
		t.Fatalf("request modalities %s audio %s", mods, audio)
	}
	ms := outputMedia(evs)
	if len(ms) != 1 || ms[0].Type != "audio" || ms[0].MimeType != "audio/pcm" {
		t.Fatalf("output_media %+v", ms)
	}
	checkStored(t, *res.SessionFile, ms[0], pcm, 1)
	noBytesInFrames(t, evs, pcm)
}

// A configured Responses route whose model declares image output offers
// the image_generation tool, after the function tools; the image it
// generates is stored and announced.
func TestOutputMediaImageRoute(t *testing.T) {
	img := noise("GIF89a", 50<<10, 8)
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{
		Images: []fakeprovider.Image{{Data: img}}, Text: "A GIF.",
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".octet", "credentials"), 0o700)
	cfg := `{"providers":{"art":{"base_url":"` + fake.BaseURL(fakeprovider.ModeResponses) + `","provider_mode":"openai-responses",` +
		`"models":[{"id":"painter","context_window_tokens":32768,"max_output_tokens":4096,"output_modalities":["text","image"]}]}}}`
	os.WriteFile(filepath.Join(home, ".octet", "models.json"), []byte(cfg), 0o600)
	os.WriteFile(filepath.Join(home, ".octet", "credentials", "art.json"), []byte(`{"api_key":"art-key"}`), 0o600)
	evs, res := mediaRun(t, home, runtime.RunRequest{RunID: "run-1", Workspace: t.TempDir(), Model: "painter", Prompt: "paint",
		SessionDir: filepath.Join(home, "sessions"), SessionID: "paint"})
	if res.Status != "completed" {
		t.Fatalf("result %+v %+v", res, res.Error)
	}
	tools, _ := fake.Requests()[0].Body["tools"].([]any)
	if len(tools) < 2 {
		t.Fatalf("tools %v", tools)
	}
	last, _ := json.Marshal(tools[len(tools)-1])
	first, _ := tools[0].(map[string]any)
	if string(last) != `{"type":"image_generation"}` || first["type"] != "function" {
		t.Fatalf("tools %s", last)
	}
	ms := outputMedia(evs)
	if len(ms) != 1 || ms[0].MimeType != "image/gif" {
		t.Fatalf("output_media %+v", ms)
	}
	checkStored(t, *res.SessionFile, ms[0], img, 1)
}
