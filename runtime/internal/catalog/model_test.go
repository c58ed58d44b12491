package catalog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{in: "openai-compatible", want: ModeOpenAICompatible},
		{in: "openai-responses", want: ModeOpenAIResponses},
		{in: "anthropic-messages", want: ModeAnthropicMessages},
		{in: "", wantErr: true},
		{in: "OpenAI-Compatible", wantErr: true},
		{in: "openai", wantErr: true},
		{in: "anthropic-messages ", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseMode(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseMode(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseMode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestModalities(t *testing.T) {
	tests := []struct {
		name       string
		mode       Mode
		modalities []string
		wantVision bool
		wantAudio  bool
		wantEff    []string
	}{
		{"text only", ModeOpenAICompatible, []string{"text"}, false, false, []string{"text"}},
		{"image on chat", ModeOpenAICompatible, []string{"text", "image"}, true, false, []string{"text", "image"}},
		{"audio on chat", ModeOpenAICompatible, []string{"text", "audio"}, false, true, []string{"text", "audio"}},
		{"audio on responses", ModeOpenAIResponses, []string{"text", "audio"}, false, false, []string{"text"}},
		{"audio on anthropic", ModeAnthropicMessages, []string{"text", "image", "audio"}, true, false, []string{"text", "image"}},
		{"all on chat, any order", ModeOpenAICompatible, []string{"audio", "image", "text"}, true, true, []string{"text", "image", "audio"}},
		{"text implied", ModeOpenAICompatible, []string{"image"}, true, false, []string{"text", "image"}},
		{"nil modalities", ModeOpenAIResponses, nil, false, false, []string{"text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Model{Mode: tt.mode, InputModalities: tt.modalities}
			if got := m.Vision(); got != tt.wantVision {
				t.Errorf("Vision() = %v, want %v", got, tt.wantVision)
			}
			if got := m.Audio(); got != tt.wantAudio {
				t.Errorf("Audio() = %v, want %v", got, tt.wantAudio)
			}
			if diff := cmp.Diff(tt.wantEff, m.EffectiveModalities()); diff != "" {
				t.Errorf("EffectiveModalities() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		mode Mode
		base string
		want string
	}{
		{ModeOpenAICompatible, "https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"},
		{ModeOpenAICompatible, "http://127.0.0.1:1234/v1/", "http://127.0.0.1:1234/v1/chat/completions"},
		{ModeOpenAICompatible, "http://localhost:8080//", "http://localhost:8080/chat/completions"},
		{ModeOpenAIResponses, "https://api.openai.com/v1", "https://api.openai.com/v1/responses"},
		{ModeOpenAIResponses, "https://gw.example/openai/v1/", "https://gw.example/openai/v1/responses"},
		{ModeAnthropicMessages, "https://api.anthropic.com", "https://api.anthropic.com/v1/messages"},
		{ModeAnthropicMessages, "https://api.anthropic.com/", "https://api.anthropic.com/v1/messages"},
		{ModeAnthropicMessages, "https://proxy.example/anthropic/v1", "https://proxy.example/anthropic/v1/messages"},
		{ModeAnthropicMessages, "https://proxy.example/anthropic/v1/", "https://proxy.example/anthropic/v1/messages"},
		{ModeAnthropicMessages, "https://proxy.example/v1beta", "https://proxy.example/v1beta/v1/messages"},
		{Mode("bogus"), "https://x.example", ""},
	}
	for _, tt := range tests {
		if got := Endpoint(tt.mode, tt.base); got != tt.want {
			t.Errorf("Endpoint(%q, %q) = %q, want %q", tt.mode, tt.base, got, tt.want)
		}
	}
	m := Model{Mode: ModeAnthropicMessages, BaseURL: AnthropicBaseURL}
	if got, want := m.Endpoint(), "https://api.anthropic.com/v1/messages"; got != want {
		t.Errorf("Model.Endpoint() = %q, want %q", got, want)
	}
}

func boolPtr(b bool) *bool { return &b }

func TestNormalizeModalities(t *testing.T) {
	tests := []struct {
		name     string
		declared []string
		vision   *bool
		want     []string
		wantErr  string
	}{
		{name: "empty", want: []string{"text"}},
		{name: "text", declared: []string{"text"}, want: []string{"text"}},
		{name: "image", declared: []string{"image"}, want: []string{"text", "image"}},
		{name: "audio image", declared: []string{"audio", "image"}, want: []string{"text", "image", "audio"}},
		{name: "vision true adds image", vision: boolPtr(true), want: []string{"text", "image"}},
		{name: "vision true with image", declared: []string{"image"}, vision: boolPtr(true), want: []string{"text", "image"}},
		{name: "vision false alone", vision: boolPtr(false), want: []string{"text"}},
		{name: "vision false with audio", declared: []string{"audio"}, vision: boolPtr(false), want: []string{"text", "audio"}},
		{name: "vision false contradicts image", declared: []string{"image"}, vision: boolPtr(false), wantErr: "vision is false"},
		{name: "unknown", declared: []string{"video"}, wantErr: `unknown modality "video"`},
		{name: "wrong case", declared: []string{"Image"}, wantErr: `unknown modality "Image"`},
		{name: "duplicate", declared: []string{"image", "image"}, wantErr: "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := normalizeModalities(tt.declared, tt.vision)
			checkResult(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestBuiltinIsSortedFreshCopy(t *testing.T) {
	a := Builtin()
	if len(a) == 0 {
		t.Fatal("Builtin() is empty")
	}
	for i := 1; i < len(a); i++ {
		p, q := a[i-1], a[i]
		if p.Provider > q.Provider || (p.Provider == q.Provider && p.ID >= q.ID) {
			t.Errorf("not sorted by provider then ID at %d: %s/%s before %s/%s", i, p.Provider, p.ID, q.Provider, q.ID)
		}
	}
	// Mutating the result must not affect later calls.
	want := Builtin()
	for i := range a {
		a[i].ID = "mutated"
		a[i].InputModalities[0] = "mutated"
		if a[i].Cost != nil {
			a[i].Cost.Input = -1
		}
	}
	if diff := cmp.Diff(want, Builtin()); diff != "" {
		t.Errorf("Builtin() changed after mutating an earlier result (-want +got):\n%s", diff)
	}
}

// checkResult holds a call's result to a table case: with wantErr, err
// must contain it; without, err must be nil and got equal want.
func checkResult[T any](t *testing.T, got T, err error, want T, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error = %v, want containing %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
