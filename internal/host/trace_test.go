package host

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"octet.dev/host/runtime"
)

// TestSessionTransitionsLoggedAtTraceLevel: a logger enabled at
// runtime.LevelTrace gets one line per session machine transition; a
// debug-level one gets none, and no tracer is installed for it.
func TestSessionTransitionsLoggedAtTraceLevel(t *testing.T) {
	in := `{"protocol_version":1,"request_id":"h","command":"hello"}` + "\n"
	trace := `"level":"` + runtime.LevelTrace.String() + `"`
	for _, lvl := range []slog.Level{runtime.LevelTrace, slog.LevelDebug} {
		var logs, out bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: lvl}))
		h := New(Config{In: strings.NewReader(in), Out: &out, Log: log, Version: "test"})
		if err := h.Serve(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := strings.Count(logs.String(), `"msg":"state machine transition"`)
		if lvl == slog.LevelDebug {
			if got != 0 || sessionTracer(log) != nil {
				t.Errorf("debug level: %d transitions logged", got)
			}
			continue
		}
		for _, want := range []string{
			trace + `,"msg":"state machine transition","machine":"session","trigger":"request","from":"idle","to":"busy"`,
			`"machine":"session","trigger":"terminal","from":"busy","to":"idle"`,
			`"machine":"session","trigger":"eof","from":"idle","to":"closed"`,
		} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("no %s in the log:\n%s", want, logs.String())
			}
		}
		if got != 3 {
			t.Errorf("%d transitions logged, want 3:\n%s", got, logs.String())
		}
	}
}

// TestNilLogDiscards: a Config without Log serves, logging nothing.
func TestNilLogDiscards(t *testing.T) {
	var out bytes.Buffer
	h := New(Config{In: strings.NewReader("{\n"), Out: &out, Version: "test"})
	if err := h.Serve(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"protocol_error"`) {
		t.Errorf("output %s", out.String())
	}
}
