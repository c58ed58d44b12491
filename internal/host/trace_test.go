package host

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestSessionTransitionsLoggedAtTraceLevel: a trace-level logger gets one
// line per session machine transition; a debug-level one gets none.
func TestSessionTransitionsLoggedAtTraceLevel(t *testing.T) {
	in := `{"protocol_version":1,"request_id":"h","command":"hello"}` + "\n"
	for _, lvl := range []zerolog.Level{zerolog.TraceLevel, zerolog.DebugLevel} {
		var logs, out bytes.Buffer
		h := New(Config{In: strings.NewReader(in), Out: &out, Log: zerolog.New(&logs).Level(lvl), Version: "test"})
		if err := h.Serve(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := strings.Count(logs.String(), `"message":"state machine transition"`)
		if lvl == zerolog.DebugLevel {
			if got != 0 {
				t.Errorf("debug level: %d transitions logged", got)
			}
			continue
		}
		for _, want := range []string{
			`"level":"trace","machine":"session","trigger":"request","from":"idle","to":"busy"`,
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
