package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"octet.dev/host/internal/schematest"
	"octet.dev/host/internal/testbin"
)

// hostBin is the real octet-host, built once by TestMain.
var hostBin string

// The test binary doubles as a deliberately broken host: with brokenEnv
// set it runs the real host (brokenHostEnv) and rewrites its events on the
// way out (brokenMain), so the kit can be shown to fail.
const (
	brokenEnv     = "OCTET_CONFORMANCE_BROKEN"
	brokenHostEnv = "OCTET_CONFORMANCE_REAL_HOST"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(brokenEnv); mode != "" {
		os.Exit(brokenMain(mode, os.Getenv(brokenHostEnv)))
	}
	hostBin = testbin.MustBuild(testbin.Host)
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// brokenMain runs host with stdin passed through and stdout rewritten line
// by line as mode says; it exits with the host's status.
func brokenMain(mode, host string) int {
	cmd := exec.Command(host)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	terminal := regexp.MustCompile(`"type":"(final_result|protocol_error|hello|models|shutdown)"`)
	echoedID := regexp.MustCompile(`^(\{"protocol_version":1,"request_id":)"[^"]*"`)
	w := bufio.NewWriter(os.Stdout)
	br := bufio.NewReaderSize(out, 2<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			switch mode {
			case "reseq": // a gap in seq
				line = bytes.Replace(line, []byte(`"seq":2,`), []byte(`"seq":3,`), 1)
			case "drop-final": // a run without its terminal event
				if bytes.Contains(line, []byte(`"type":"final_result"`)) {
					line = nil
				}
			case "double-terminal": // two terminal events for one request
				if terminal.Match(line) {
					line = append(line, line...)
				}
			case "in-band-abort": // a hello the protocol forbids
				line = bytes.Replace(line, []byte(`"in_band_abort":false`), []byte(`"in_band_abort":true`), 1)
			case "null-error-id": // protocol_error never echoes the request_id
				if bytes.Contains(line, []byte(`"type":"protocol_error"`)) {
					line = echoedID.ReplaceAll(line, []byte("${1}null"))
				}
			case "no-run-id": // run events without run_id
				line = regexp.MustCompile(`,"run_id":"[^"]*"`).ReplaceAll(line, nil)
			}
			w.Write(line)
			w.Flush()
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 1
	}
	if mode == "exit-1" { // a clean EOF answered with a failure status
		return 1
	}
	return 0
}

// kitRun runs the kit in-process with HOME in a temporary directory.
func kitRun(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	var out, errOut bytes.Buffer
	code := run(args, env, &out, &errOut)
	if errOut.Len() > 0 {
		t.Logf("stderr: %s", errOut.String())
	}
	return code, out.String()
}

var summary = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed`)

func TestKitPassesAgainstOctetHost(t *testing.T) {
	for _, level := range []string{"contract", "protocol"} {
		t.Run(level, func(t *testing.T) {
			// Every line both ways, the fuzzer's included, is judged by the
			// JSON Schema: an event must be valid, a request the host
			// accepted too, and one it refused for a reason a schema can
			// state must be invalid.
			newTap = func() func(bool, []byte) {
				var s schematest.Session
				return func(out bool, line []byte) {
					if out {
						s.Sent(line)
					} else {
						s.Got(t, line)
					}
				}
			}
			defer func() { newTap = nil }()
			code, out := kitRun(t, nil, "-level", level, hostBin)
			m := summary.FindStringSubmatch(out)
			if code != 0 || m == nil || m[2] != "0" {
				t.Fatalf("exit %d, want 0; output:\n%s", code, out)
			}
			// Every case ran and passed or (at level protocol) was
			// skipped; the fuzz session's clean EOF is one more case.
			cases, _ := loadCases()
			want := len(cases) + len(fuzzCases(1, 60)) + 1
			if level == "protocol" {
				want -= len(regexp.MustCompile(`(?m)^skip  `).FindAllString(out, -1))
			}
			if got := atoi(m[1]); got != want {
				t.Errorf("%d cases passed, want %d:\n%s", got, want, out)
			}
			for _, name := range []string{"transcript/run_text", "transcript/run_tool", "transcript/run_retry", "fuzz/oversized/3MiB", "fuzz/eof-exits-0"} {
				if !strings.Contains(out, "ok    "+name+"\n") {
					t.Errorf("no passing %s in:\n%s", name, out)
				}
			}
		})
	}
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// TestKitFailsAgainstBrokenHosts runs the kit against the real host behind
// a filter that breaks one rule: the kit must exit 1 and name the rule.
func TestKitFailsAgainstBrokenHosts(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode  string
		args  []string
		fails string // a failing case
		why   string // in its reason
	}{
		{"reseq", nil, "transcript/run_text", "SeqGapless"},
		{"drop-final", []string{"-timeout", "2s", "-run", "transcript/run_(text|refused)"}, "transcript/run_text", "no event within 2s"},
		{"double-terminal", []string{"-run", "transcript/run_(text|session)"}, "transcript/run_text", "ExactlyOneTerminal"},
		{"double-terminal", []string{"-run", "transcript/run_session"}, "transcript/run_session", "ExactlyOneTerminal"},
		{"double-terminal", []string{"-run", "transcript/hello"}, "transcript/hello", `want hello for request_id "probe-2"; got request_id "probe-1"`},
		{"in-band-abort", []string{"-run", "transcript/hello"}, "transcript/hello", `"in_band_abort" is true, not false`},
		{"null-error-id", []string{"-run", "transcript/malformed"}, "transcript/malformed", `want protocol_error for request_id "a2"`},
		{"no-run-id", []string{"-run", "transcript/run_text"}, "transcript/run_text", "run event without run_id"},
		{"exit-1", []string{"-run", "transcript/hello"}, "transcript/hello", "exit status 1, want 0"},
	} {
		t.Run(tc.mode+"/"+tc.fails, func(t *testing.T) {
			env := []string{brokenEnv + "=" + tc.mode, brokenHostEnv + "=" + hostBin}
			code, out := kitRun(t, env, append(tc.args, self)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1; output:\n%s", code, out)
			}
			m := summary.FindStringSubmatch(out)
			if m == nil || m[2] == "0" {
				t.Fatalf("no failure counted:\n%s", out)
			}
			i := strings.Index(out, "FAIL  "+tc.fails+"\n")
			if i < 0 {
				t.Fatalf("%s did not fail:\n%s", tc.fails, out)
			}
			reason, _, _ := strings.Cut(out[i+len("FAIL  "+tc.fails+"\n"):], "\nok")
			if !strings.Contains(reason, tc.why) {
				t.Errorf("%s failed for another reason; want %q in:\n%s", tc.fails, tc.why, reason)
			}
		})
	}
}

// TestNullErrorIDPassesAtProtocolLevel: whether a malformed line's error
// echoes its request_id is this project's decision, so -level protocol
// accepts a host that never echoes it.
func TestNullErrorIDPassesAtProtocolLevel(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{brokenEnv + "=null-error-id", brokenHostEnv + "=" + hostBin}
	code, out := kitRun(t, env, "-level", "protocol", "-run", "transcript/malformed|fuzz/duplicate_field", self)
	if code != 0 || !strings.Contains(out, "ok    transcript/malformed\n") {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "no host to test"},
		{[]string{"-level", "strict", "x"}, 2, "-level must be protocol or contract"},
		{[]string{"-run", "(", "x"}, 2, "-run:"},
		{[]string{"/nonexistent/octet-host"}, 2, "host \"/nonexistent/octet-host\""},
		{[]string{"-timeout", "0s", "x"}, 2, "-timeout must be positive"},
		{[]string{"-help"}, 0, "Usage:"},
	} {
		var out, errOut bytes.Buffer
		if code := run(tc.args, os.Environ(), &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.msg) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.msg)
		}
	}
}

func TestList(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"-list", "-fuzz", "3"}, nil, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{"transcript/hello\n", "fuzz/invalid_utf8/between-tokens\n", "fuzz/random/2-"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("no %q in the list:\n%s", name, out.String())
		}
	}
}
