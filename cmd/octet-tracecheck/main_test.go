package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"octet.dev/host/fsm"
	fsmrun "octet.dev/host/fsm/run"
)

// runLog is the trace of one real run machine, as slog JSON lines.
func runLog(t *testing.T) string {
	var out bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.Level(-8)}))
	m := fsmrun.New()
	m.SetTracer(func(tr fsm.Transition) {
		log.LogAttrs(context.Background(), slog.Level(-8), "state machine transition", slog.String("run_id", "r"),
			slog.String("machine", tr.Machine), slog.String("trigger", tr.Trigger), slog.String("from", tr.From),
			slog.String("to", tr.To), slog.String("from_state", tr.FromState), slog.String("to_state", tr.ToState))
	})
	for _, in := range []fsmrun.Input{{Trigger: fsmrun.TrAccept}, {Trigger: fsmrun.TrStart}, {Trigger: fsmrun.TrStream},
		{Trigger: fsmrun.TrSettle, Status: fsmrun.StatusBlocked}, {Trigger: fsmrun.TrFinalize}} {
		if _, err := m.Fire(in); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

func TestCommand(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.log"), filepath.Join(dir, "bad.log")
	log := runLog(t)
	var kept []string
	for _, l := range strings.SplitAfter(log, "\n") {
		if !strings.Contains(l, `"trigger":"stream"`) {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(good, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-tla", "../../tla", good}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "5 transitions checked") {
		t.Errorf("good log: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"-tla", "../../tla", good, bad}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "bad.log: line 3: run r, machine run, step 2 (settle)") {
		t.Errorf("bad log: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if code := run([]string{"-tla", dir, good}, &stdout, &stderr); code != 2 {
		t.Errorf("no graphs: exit %d", code)
	}
}
