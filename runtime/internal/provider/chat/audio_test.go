package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/provider"
)

// A route with audio output asks for it as the API requires; the
// transcript is answer text; the audio, in many base64 pieces, is one
// EventMedia before the finish, its MIME type sniffed (a WAV although
// pcm16 was asked for); a cut stream leaves no file.
func TestAudioOutput(t *testing.T) {
	wav := []byte("RIFF\x00\x00\x00\x00WAVEfmt " + strings.Repeat("sound", 20000))
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{
		{AudioTranscript: "Hi there, friend.", Audio: wav},
		{AudioTranscript: "Cut.", Audio: wav},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	p, err := New(Config{BaseURL: fake.BaseURL(fakeprovider.ModeChat), HTTPClient: edgetest.Client(t), AudioOutput: true, AudioVoice: "marin"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	req := provider.Request{Model: "gpt-audio", SpoolDir: dir, Messages: []provider.Message{{Role: provider.RoleUser, Text: "hello"}}}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	sum, events, err := drain(t, s)
	if err != nil || sum.Text != "Hi there, friend." || len(sum.Media) != 1 {
		t.Fatalf("%+v %v", sum, err)
	}
	if events[len(events)-1].Kind != provider.EventFinish || events[len(events)-2].Kind != provider.EventMedia && events[len(events)-2].Kind != provider.EventUsage {
		t.Fatalf("the media is not reported before the finish")
	}
	m := sum.Media[0]
	want := sha256.Sum256(wav)
	got, _ := os.ReadFile(m.Spool)
	if m.Type != provider.MediaAudio || m.MIMEType != "audio/wav" || m.SHA256 != hex.EncodeToString(want[:]) || string(got) != string(wav) {
		t.Fatalf("media %+v", m)
	}
	os.Remove(m.Spool)
	var body struct {
		Modalities []string          `json:"modalities"`
		Audio      map[string]string `json:"audio"`
	}
	if err := json.Unmarshal(fake.Requests()[0].RawBody, &body); err != nil || strings.Join(body.Modalities, ",") != "text,audio" ||
		body.Audio["voice"] != "marin" || body.Audio["format"] != "pcm16" {
		t.Fatalf("request %+v %v", body, err)
	}

	fake.InjectFault(fakeprovider.FaultCutMidStream{AfterEvents: 4})
	s, err = p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := drain(t, s); err == nil {
		t.Fatal("a cut stream succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a cut stream left %v", entries)
	}
}
