package examples

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"octet.dev/host/internal/testbin"
	"octet.dev/host/runtime/fakeprovider"
)

var hostBin string

func TestMain(m *testing.M) {
	hostBin = testbin.MustBuild(testbin.Host)
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

const apiKey = "example-key-0123456789"

// example is one client example and the runtime that runs it.
type example struct {
	name, runtime, script string
	minVersion            string // shown in the skip message
	versionOK             func(version string) bool
}

var examples = []example{
	{name: "node", runtime: "node", script: "node/octet_client.mjs", minVersion: "20",
		versionOK: func(v string) bool { return majorAtLeast(strings.TrimPrefix(v, "v"), 20) }},
	{name: "python", runtime: "python3", script: "python/octet_client.py", minVersion: "3.8",
		versionOK: func(v string) bool {
			v = strings.TrimPrefix(v, "Python ")
			major, minor, _ := strings.Cut(v, ".")
			m, _ := strconv.Atoi(major)
			return m > 3 || m == 3 && majorAtLeast(minor, 8)
		}},
}

func majorAtLeast(v string, min int) bool {
	head, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(head)
	return err == nil && n >= min
}

// runtimePath returns the example's interpreter, or skips the test with
// the reason.
func (ex example) runtimePath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath(ex.runtime)
	if err != nil {
		t.Skipf("%s is not installed (%v): the %s example needs %s >= %s", ex.runtime, err, ex.name, ex.runtime, ex.minVersion)
	}
	out, err := exec.Command(p, "--version").CombinedOutput()
	if v := strings.TrimSpace(string(out)); err != nil || !ex.versionOK(v) {
		t.Skipf("%s --version says %q (%v): the %s example needs %s >= %s", ex.runtime, v, err, ex.name, ex.runtime, ex.minVersion)
	}
	return p
}

// runExample runs the example against host with an inline route to fake
// and returns its exit status, stdout and stderr.
func runExample(t *testing.T, ex example, host string, fake *fakeprovider.Server, extra ...string) (int, string, string) {
	t.Helper()
	interp := ex.runtimePath(t)
	ws := t.TempDir()
	args := append([]string{ex.script, "--host", host, "--workspace", ws, "--model", "fake-model", "--prompt", "Say hello.",
		"--provider", "fake", "--base-url", fake.BaseURL(fakeprovider.ModeChat), "--provider-mode", "openai-compatible",
		"--session-dir", filepath.Join(t.TempDir(), "sessions"), "--timeout-ms", "30000"}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, interp, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "OCTET_API_KEY="+apiKey)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the %s example: %v", ex.name, err)
	}
	return code, stdout.String(), stderr.String()
}

func newFake(t *testing.T, turns ...fakeprovider.Turn) *fakeprovider.Server {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: turns}, APIKey: apiKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	return fake
}

func TestExamples(t *testing.T) {
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			t.Run("run", func(t *testing.T) {
				fake := newFake(t, fakeprovider.Turn{Text: "Hello from the fake provider.", Chunk: 5})
				code, out, errOut := runExample(t, ex, hostBin, fake)
				if code != 0 || out != "Hello from the fake provider.\nfinal: status=completed code=\n" {
					t.Fatalf("exit %d, stdout %q; want 0 and the streamed answer then the final line\nstderr: %s", code, out, errOut)
				}
				if !regexp.MustCompile(`(?m)^host .+, protocol 1$`).MatchString(errOut) || !strings.Contains(errOut, "host exited: 0") {
					t.Errorf("stderr lacks the hello line or the clean exit:\n%s", errOut)
				}
				if reqs := fake.Requests(); len(reqs) != 1 || !reqs[0].HadKey {
					t.Errorf("the provider got %d requests (want 1, with the key from OCTET_API_KEY)", len(reqs))
				}
			})
			t.Run("cancel", func(t *testing.T) {
				// The provider stalls mid-stream; the example cancels by
				// SIGTERM to the host's group, and the host writes its
				// final_result "canceled" and exits 128+15.
				fake := newFake(t, fakeprovider.Turn{Text: "a long answer that never ends"})
				fake.InjectFault(fakeprovider.FaultStall{AfterEvents: 2, For: time.Minute})
				start := time.Now()
				code, out, errOut := runExample(t, ex, hostBin, fake, "--cancel-after-ms", "500")
				if code != 1 || !strings.HasSuffix(out, "final: status=error code=canceled\n") {
					t.Fatalf("exit %d, stdout %q; want 1 and a canceled final_result\nstderr: %s", code, out, errOut)
				}
				if !strings.Contains(errOut, "canceling: SIGTERM to the host process group") || !strings.Contains(errOut, "host exited: 143") {
					t.Errorf("stderr lacks the cancel or the host's exit 143:\n%s", errOut)
				}
				if d := time.Since(start); d > 30*time.Second {
					t.Errorf("the cancel took %v", d)
				}
			})
			t.Run("violation", func(t *testing.T) {
				// A host that answers hello with seq 2, then hangs: the
				// example reports the gap and kills the group, also the
				// sleeping child.
				bad := filepath.Join(t.TempDir(), "bad-host")
				pidFile := filepath.Join(t.TempDir(), "child.pid")
				script := "#!/bin/sh\nread line\nsleep 60 &\necho $! > " + pidFile + "\n" +
					`printf '%s\n' '{"protocol_version":1,"request_id":"probe-1","seq":2,"type":"hello","data":{}}'` + "\nwait\n"
				if err := os.WriteFile(bad, []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
				code, out, errOut := runExample(t, ex, bad, newFake(t))
				if code != 3 || !strings.Contains(errOut, "protocol violation: seq 2 after seq 0 for probe-1") {
					t.Fatalf("exit %d, stdout %q, stderr %q; want 3 and the seq gap", code, out, errOut)
				}
				b, err := os.ReadFile(pidFile)
				if err != nil {
					t.Fatal(err)
				}
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				deadline := time.Now().Add(5 * time.Second)
				for alive(pid) {
					if time.Now().After(deadline) {
						t.Fatalf("the bad host's child %d survived the example", pid)
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
		})
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestMissingRuntimeSkips: an example whose runtime is absent is skipped
// with its reason, not failed.
func TestMissingRuntimeSkips(t *testing.T) {
	ex := example{name: "imaginary", runtime: "octet-no-such-runtime", minVersion: "1", versionOK: func(string) bool { return true }}
	var skipped bool
	t.Run("absent", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		ex.runtimePath(t)
	})
	if !skipped {
		t.Error("a missing runtime did not skip")
	}
}
