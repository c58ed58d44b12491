package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"octet.dev/host/runtime"
)

// bridged returns a slog logger over a zerolog logger at lvl writing JSON
// to the returned buffer.
func bridged(lvl zerolog.Level) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(newZerologHandler(zerolog.New(&buf).Level(lvl))), &buf
}

// decodeLines decodes one JSON object a line.
func decodeLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func TestBridgeLevels(t *testing.T) {
	for _, c := range []struct {
		in   slog.Level
		want string
	}{
		{runtime.LevelTrace, "trace"}, {slog.LevelDebug - 1, "trace"}, {slog.LevelDebug - 100, "trace"},
		{slog.LevelDebug, "debug"}, {slog.LevelDebug + 3, "debug"},
		{slog.LevelInfo, "info"}, {slog.LevelInfo + 2, "info"},
		{slog.LevelWarn, "warn"}, {slog.LevelWarn + 3, "warn"},
		{slog.LevelError, "error"}, {slog.LevelError + 8, "error"},
	} {
		log, buf := bridged(zerolog.TraceLevel)
		log.Log(context.Background(), c.in, "m")
		lines := decodeLines(t, buf.String())
		if len(lines) != 1 || lines[0]["level"] != c.want || lines[0]["message"] != "m" {
			t.Errorf("slog level %v logged as %s, want level %s", c.in, buf, c.want)
		}
	}
}

func TestBridgeEnabled(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		z        zerolog.Level
		enabled  []slog.Level
		disabled []slog.Level
	}{
		{zerolog.TraceLevel, []slog.Level{runtime.LevelTrace, slog.LevelDebug, slog.LevelError}, nil},
		{zerolog.DebugLevel, []slog.Level{slog.LevelDebug, slog.LevelInfo}, []slog.Level{runtime.LevelTrace, slog.LevelDebug - 1}},
		{zerolog.InfoLevel, []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError}, []slog.Level{runtime.LevelTrace, slog.LevelDebug}},
		{zerolog.ErrorLevel, []slog.Level{slog.LevelError, slog.LevelError + 4}, []slog.Level{slog.LevelWarn}},
		{zerolog.Disabled, nil, []slog.Level{runtime.LevelTrace, slog.LevelInfo, slog.LevelError + 4}},
	} {
		log, buf := bridged(c.z)
		for _, l := range c.enabled {
			if !log.Enabled(ctx, l) {
				t.Errorf("zerolog at %s: %v is not enabled", c.z, l)
			}
		}
		for _, l := range c.disabled {
			if log.Enabled(ctx, l) {
				t.Errorf("zerolog at %s: %v is enabled", c.z, l)
			}
			log.Log(ctx, l, "dropped")
		}
		if strings.Contains(buf.String(), "dropped") {
			t.Errorf("zerolog at %s wrote a disabled record: %s", c.z, buf)
		}
	}
	if slog.New(newZerologHandler(zerolog.Nop())).Enabled(ctx, slog.LevelError) {
		t.Error("zerolog.Nop() is enabled")
	}
	// zerolog's global level counts too.
	prev := zerolog.GlobalLevel()
	zerolog.SetGlobalLevel(zerolog.WarnLevel)
	defer zerolog.SetGlobalLevel(prev)
	log, _ := bridged(zerolog.TraceLevel)
	if log.Enabled(ctx, slog.LevelInfo) || !log.Enabled(ctx, slog.LevelWarn) {
		t.Error("the global level is not consulted")
	}
}

// secret is a LogValuer that hides its value.
type secret string

func (secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

func TestBridgeAttrs(t *testing.T) {
	log, buf := bridged(zerolog.TraceLevel)
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	log.LogAttrs(context.Background(), slog.LevelInfo, "all kinds",
		slog.String("s", "x"), slog.Int("i", -3), slog.Uint64("u", 7), slog.Float64("f", 1.5), slog.Bool("b", true),
		slog.Duration("d", 1500*time.Millisecond), slog.Time("t", at),
		slog.Any("error", errors.New("boom")), slog.Any("other_err", errors.New("bang")),
		slog.Any("list", []int{1, 2}), slog.Any("key", secret("sk-live")),
		slog.Attr{}, // empty: ignored
		slog.Group("", slog.String("inlined", "y")),
		slog.Group("g", slog.Int("n", 1), slog.Group("h", slog.String("deep", "z"))),
		slog.Group("empty"), slog.Group("only_empty", slog.Group("inner")),
	)
	got := decodeLines(t, buf.String())
	want := []map[string]any{{
		"level": "info", "message": "all kinds",
		"s": "x", "i": -3.0, "u": 7.0, "f": 1.5, "b": true,
		"d": 1500.0, "t": at.Format(zerolog.TimeFieldFormat),
		"error": "boom", "other_err": "bang", "list": []any{1.0, 2.0}, "key": "[redacted]",
		"inlined": "y",
		"g":       map[string]any{"n": 1.0, "h": map[string]any{"deep": "z"}},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	if strings.Contains(buf.String(), "sk-live") {
		t.Error("a LogValuer was not resolved")
	}
}

func TestBridgeWithAttrsAndGroups(t *testing.T) {
	var buf bytes.Buffer
	z := zerolog.New(&buf).With().Str("component", "octet-host").Logger()
	base := slog.New(newZerologHandler(z))
	ctx := context.Background()

	top := base.With("run_id", "r1")
	g := top.WithGroup("g")
	gx := g.With("x", 1)
	gy := g.With("y", 2) // a sibling: gx's x must not leak into it
	h := gx.WithGroup("h")

	h.InfoContext(ctx, "nested", "c", 3)
	gy.InfoContext(ctx, "sibling")
	g.InfoContext(ctx, "empty group") // no attribute under g: no g
	h.InfoContext(ctx, "empty inner") // h empty, g still holds x
	top.InfoContext(ctx, "top", "k", "v")
	base.InfoContext(ctx, "base")
	base.WithGroup("").With("flat", true).InfoContext(ctx, "empty name")

	common := map[string]any{"level": "info", "component": "octet-host"}
	with := func(m map[string]any) map[string]any {
		for k, v := range common {
			m[k] = v
		}
		return m
	}
	want := []map[string]any{
		with(map[string]any{"message": "nested", "run_id": "r1", "g": map[string]any{"x": 1.0, "h": map[string]any{"c": 3.0}}}),
		with(map[string]any{"message": "sibling", "run_id": "r1", "g": map[string]any{"y": 2.0}}),
		with(map[string]any{"message": "empty group", "run_id": "r1"}),
		with(map[string]any{"message": "empty inner", "run_id": "r1", "g": map[string]any{"x": 1.0}}),
		with(map[string]any{"message": "top", "run_id": "r1", "k": "v"}),
		with(map[string]any{"message": "base"}),
		with(map[string]any{"message": "empty name", "flat": true}),
	}
	if d := cmp.Diff(want, decodeLines(t, buf.String())); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
}
