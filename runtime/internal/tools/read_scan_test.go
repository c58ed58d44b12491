package tools

import (
	"context"
	"strings"
	"testing"
	"time"
)

// runGuarded runs a tool and fails the test when it does not return within
// hangGuard.
func runGuarded(t *testing.T, env Env, name, args string) (Result, error) {
	t.Helper()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(context.Background(), env, name, []byte(args))
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(hangGuard):
		t.Fatalf("%s %s still running after %v", name, args, hangGuard)
		return Result{}, nil
	}
}

// TestReadBoundedScan: read does work proportional to what it shows plus a
// bounded scan, so a 64 GiB file answers at once; the old read counted
// every remaining line (or measured a whole line it cut), reading all of
// it. Past the scan it says how many lines it saw, not how many there are.
func TestReadBoundedScan(t *testing.T) {
	env, ws, _ := newEnv(t, nil)
	sparseFile(t, ws, "huge.txt", textHead(200), 64<<30)
	env.MaxOutputBytes = 4000
	runCasesGuarded(t, env, []toolCase{
		{name: "window ends before the hole", tool: "read", args: `{"path":"huge.txt","limit":10}`,
			wantIn: []string{"    10\thead line 0010", "... at least 191 more lines (the rest of the file was not counted); use offset=11 to continue"}},
		{name: "output bound within the text", tool: "read", args: `{"path":"huge.txt"}`, truncated: true,
			wantIn: []string{"     1\thead line 0001", "bytes shown]", "... at least 1"}},
		{name: "cut line", tool: "read", args: `{"path":"huge.txt","offset":201}`, truncated: true,
			wantIn: []string{"[output truncated: ", "of at least", "... line 201 is longer than the output bound and was cut; if more lines follow, use offset=202"}},
	})
}

// runCasesGuarded is runCases with each call under runGuarded.
func runCasesGuarded(t *testing.T, env Env, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runGuarded(t, env, tc.tool, tc.args)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.tool, tc.args, err)
			}
			if len(res.Output) > env.maxOutput() {
				t.Errorf("output is %d bytes, bound %d", len(res.Output), env.maxOutput())
			}
			for _, s := range tc.wantIn {
				if !strings.Contains(res.Output, s) {
					t.Errorf("output does not contain %q:\n%s", s, res.Output)
				}
			}
			if res.Truncated != tc.truncated {
				t.Errorf("Truncated = %v, want %v", res.Truncated, tc.truncated)
			}
		})
	}
}
