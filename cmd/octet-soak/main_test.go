package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{},                                   // no -host
		{"-host", "x", "-runs", "0"},         // no runs
		{"-host", "x", "-concurrency", "-1"}, // no concurrency
		{"-host", "x", "-fault-rate", "1.5"}, // not a probability
		{"-host", "x", "extra"},              // stray argument
		{"-nope"},                            // unknown flag
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", args, code, errOut.String())
		}
	}
}

// TestHostMissing: a host that cannot start is a failure to soak at all
// (exit 2), not a soak that found problems.
func TestHostMissing(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-host", filepath.Join(t.TempDir(), "absent"), "-runs", "1"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "starting the host") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}
