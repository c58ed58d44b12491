package catalog

import (
	"strings"
	"testing"
)

// Audio output is declared by the built-in audio models and by configured
// openai-compatible models; other modes, unknown and duplicate values are
// refused with a message naming the field.
func TestOutputModalities(t *testing.T) {
	audio := map[string]bool{}
	for _, m := range Builtin() {
		if m.AudioOutput() {
			audio[m.ID] = true
		}
	}
	for _, id := range []string{"gpt-audio", "gpt-audio-1.5", "gpt-audio-mini", "gpt-4o-audio-preview"} {
		if !audio[id] {
			t.Errorf("built-in %s has no audio output", id)
		}
	}
	if len(audio) != 4 {
		t.Errorf("audio output on %v", audio)
	}
	c, err := Load(writeConfig(t, `{"providers":{"v":{"base_url":"https://v.example/v1","models":[
		{"id":"talk","context_window_tokens":1000,"max_output_tokens":100,"output_modalities":["text","audio"]},
		{"id":"quiet","context_window_tokens":1000,"max_output_tokens":100,"output_modalities":["text"]}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Models() {
		if m.Provider != "v" {
			continue
		}
		if want := m.ID == "talk"; m.AudioOutput() != want {
			t.Errorf("%s: AudioOutput %v", m.ID, m.AudioOutput())
		}
	}
	c, err = Load(writeConfig(t, `{"providers":{"img":{"base_url":"https://i.example/v1","provider_mode":"openai-responses","models":[
		{"id":"painter","context_window_tokens":1000,"max_output_tokens":100,"output_modalities":["image","text"]}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := c.Lookup("painter"); !ok || !m.ImageOutput() || m.AudioOutput() || len(m.OutputModalities) != 2 || m.OutputModalities[0] != "text" {
		t.Fatalf("painter %+v", m)
	}
	for cfg, want := range map[string]string{
		`"provider_mode":"openai-responses","models":[{"id":"a","context_window_tokens":1000,"max_output_tokens":100,"output_modalities":["audio"]}]`: "audio output needs provider_mode",
		`"models":[{"id":"a","context_window_tokens":1000,"max_output_tokens":100,"output_modalities":["image"]}]`:                                    "image output needs provider_mode",
		`"models":[{"id":"a","context_window_tokens":1000,"max_output_tokens":100,"output_modalities":["video"]}]`:                                    `unknown modality "video"`,
		`"models":[{"id":"a","context_window_tokens":1000,"max_output_tokens":100,"output_modalities":["audio","audio"]}]`:                            "lists \"audio\" twice",
	} {
		_, err := Load(writeConfig(t, `{"providers":{"v":{"base_url":"https://v.example/v1",`+cfg+`}}}`))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "~/.octet/models.json") {
			t.Errorf("%s: %v, want %q", cfg, err, want)
		}
	}
}
