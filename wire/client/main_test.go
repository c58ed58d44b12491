package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"octet.dev/host/internal/schematest"
	"octet.dev/host/internal/testbin"
)

// hostBin is the octet-host binary built by TestMain; hostBuildErr says
// why it is missing.
var (
	hostBin      string
	hostBuildErr error
)

func TestMain(m *testing.M) {
	if scenario := os.Getenv(fakeEnv); scenario != "" {
		os.Exit(runFake(scenario))
	}
	hostBin, hostBuildErr = testbin.Build(testbin.Host)
	code := m.Run()
	testbin.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// realConfig returns a Config for the real host with an isolated HOME.
func realConfig(t *testing.T) Config {
	t.Helper()
	if hostBuildErr != nil {
		t.Fatalf("the host binary could not be built: %v", hostBuildErr)
	}
	// Every line both ways is judged by the JSON Schema (a violation
	// test uses a fake host, never this config).
	var schema schematest.Session
	return Config{
		Path:       hostBin,
		Env:        append(os.Environ(), "HOME="+t.TempDir()),
		CloseGrace: 5 * time.Second,
		Logger:     func(s string) { t.Log(s) },
		tap: func(out bool, line []byte) {
			if out {
				schema.Sent(line)
			} else {
				schema.Got(t, line)
			}
		},
	}
}

// fakeConfig returns a Config that starts the test binary as a fake host
// playing scenario.
func fakeConfig(t *testing.T, scenario string, env ...string) Config {
	t.Helper()
	return Config{
		Path: os.Args[0],
		Args: []string{"-test.run=^$"},
		// A race-enabled test binary sleeps a second at exit unless told not to.
		Env:        append(append(os.Environ(), fakeEnv+"="+scenario, "GORACE=atexit_sleep_ms=0"), env...),
		CloseGrace: 300 * time.Millisecond,
		TermGrace:  300 * time.Millisecond,
		Logger:     func(s string) { t.Log(s) },
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// start starts a client and registers its Close.
func start(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := Start(testContext(t), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// groupMembers returns the live (non-zombie) processes of process group
// pgid, read from /proc. Zombies are left out: a killed descendant
// reparented to an init that reaps slowly is dead all the same.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parens.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// assertGroupGone waits (bounded) until process group pgid has no live
// member: kill(-pgid, 0) fails with ESRCH, or only zombies remain.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		live := groupMembers(pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has live members %v (kill -0: %v)", pgid, live, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// childPID returns the pid the fake host reported for its child.
func childPID(t *testing.T, c *Client) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := c.Stderr()
		if i := strings.Index(s, "child-pid="); i >= 0 {
			rest := s[i+len("child-pid="):]
			if j := strings.IndexByte(rest, '\n'); j >= 0 {
				pid, err := strconv.Atoi(rest[:j])
				if err != nil {
					t.Fatalf("bad child pid in stderr %q", s)
				}
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake host reported no child pid; stderr %q", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
