package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	seqAny := regexp.MustCompile(`"seq":\d+,`)
	terminal := regexp.MustCompile(`"type":"(final_result|protocol_error|hello|models|shutdown)"`)
	echoedID := regexp.MustCompile(`^(\{"protocol_version":1,"request_id":)"[^"]*"`)
	w := bufio.NewWriter(os.Stdout)
	br := bufio.NewReaderSize(out, 2<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			switch mode {
			case "seq2": // every event numbered 2
				line = seqAny.ReplaceAll(line, []byte(`"seq":2,`))
			case "no-hello": // hello never answered
				if bytes.Contains(line, []byte(`"type":"hello"`)) {
					line = nil
				}
			case "mute-malformed": // a line without a request_id is never answered
				if bytes.Contains(line, []byte(`"request_id":null`)) {
					line = nil
				}
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
		{[]string{"-handshake-timeout", "-1s", "x"}, 2, "-handshake-timeout must be positive"},
		{[]string{"-cases", "/nonexistent/cases", "/bin/true"}, 2, "-cases /nonexistent/cases"},
		{[]string{"-junit", "/nonexistent/dir/report.xml", "/bin/true"}, 2, "-junit:"},
		{[]string{"-bogus"}, 2, "flag provided but not defined"},
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

// kitTime is the kit's own measure of a run: the time attribute of the
// JUnit report's testsuite.
func kitTime(t *testing.T, junitFile string) time.Duration {
	t.Helper()
	suites := readJUnit(t, junitFile)
	d, err := time.ParseDuration(suites.Suites[0].Time + "s")
	if err != nil {
		t.Fatalf("testsuite time %q: %v", suites.Suites[0].Time, err)
	}
	return d
}

func readJUnit(t *testing.T, file string) junitSuites {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s junitSuites
	if err := xml.Unmarshal(b, &s); err != nil {
		t.Fatalf("the JUnit report is not XML: %v\n%s", err, b)
	}
	if len(s.Suites) != 1 {
		t.Fatalf("%d testsuite elements, want 1", len(s.Suites))
	}
	return s
}

// TestFailFast: against a host that fails the handshake, at default
// settings, the kit says so in one failure, skips every other case with
// that reason, and gives its verdict well within 10 s by its own clock
// (the handshake waits 5 s at most; the bound leaves room for a loaded
// machine).
func TestFailFast(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ mode, why string }{
		{"seq2", "SeqGapless"},                       // seq numbered wrongly from the first event
		{"no-hello", "no event within 5s"},           // the handshake never answered
		{"in-band-abort", `"in_band_abort" is true`}, // a handshake the protocol forbids
	} {
		t.Run(tc.mode, func(t *testing.T) {
			junit := filepath.Join(t.TempDir(), "report.xml")
			env := []string{brokenEnv + "=" + tc.mode, brokenHostEnv + "=" + hostBin}
			code, out := kitRun(t, env, "-junit", junit, self)
			if code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, out)
			}
			if d := kitTime(t, junit); d >= 10*time.Second {
				t.Errorf("the verdict took %v by the kit's clock, want < 10s", d)
			}
			if strings.Count(out, "FAIL  ") != 1 || !strings.Contains(out, "FAIL  transcript/hello\n") {
				t.Fatalf("want transcript/hello as the only failure:\n%s", out)
			}
			if !strings.Contains(out, tc.why) {
				t.Errorf("the failure does not name %q:\n%s", tc.why, out)
			}
			m := regexp.MustCompile(`(?m)^0 passed, 1 failed, (\d+) skipped$`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no summary with skips:\n%s", out)
			}
			skips := regexp.MustCompile(`(?m)^skip  \S+ \(prerequisite handshake failed in transcript/hello\)$`).FindAllString(out, -1)
			if len(skips) != atoi(m[1]) || len(skips) < 100 {
				t.Errorf("%d cases skipped for the handshake, summary says %s:\n%s", len(skips), m[1], out)
			}
		})
	}
}

// TestReports validates the JSON and JUnit reports of one run that has
// each verdict: hello passes, run_text fails (events without run_id), and
// run_tool, which requires a working run, is skipped.
func TestReports(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "report.xml")
	env := append(append(os.Environ(), "HOME="+t.TempDir()), brokenEnv+"=no-run-id", brokenHostEnv+"="+hostBin)
	var out, errOut bytes.Buffer
	code := run([]string{"-json", "-junit", junit, "-run", "transcript/(hello|run_text|run_tool)", self}, env, &out, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, out.String(), errOut.String())
	}
	if got := strings.TrimSpace(errOut.String()); got != "1 passed, 1 failed, 1 skipped" {
		t.Errorf("stderr %q, want the summary line only", got)
	}
	verdicts := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, l := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("a stdout line is not JSON: %v: %q", err, l)
		}
		for _, f := range []string{"name", "level", "rule", "verdict", "evidence"} {
			if _, ok := r[f].(string); !ok {
				t.Errorf("no string %q in %s", f, l)
			}
		}
		if tm, ok := r["time"].(float64); !ok || tm < 0 {
			t.Errorf("no time in seconds in %s", l)
		}
		verdicts[r["name"].(string)] = r["verdict"].(string)
		switch r["verdict"] {
		case "pass":
			if r["evidence"] != "" {
				t.Errorf("a pass with evidence: %s", l)
			}
		case "fail", "skip":
			if r["evidence"] == "" {
				t.Errorf("no evidence: %s", l)
			}
		default:
			t.Errorf("verdict %v", r["verdict"])
		}
	}
	want := map[string]string{"transcript/hello": "pass", "transcript/run_text": "fail", "transcript/run_tool": "skip"}
	if !maps.Equal(verdicts, want) {
		t.Errorf("verdicts %v, want %v", verdicts, want)
	}

	s := readJUnit(t, junit)
	ts := s.Suites[0]
	if s.Tests != 3 || s.Failures != 1 || s.Skipped != 1 || ts.Tests != 3 || ts.Failures != 1 || ts.Skipped != 1 || len(ts.Cases) != 3 {
		t.Errorf("counts: testsuites %d/%d/%d, testsuite %d/%d/%d with %d testcases", s.Tests, s.Failures, s.Skipped, ts.Tests, ts.Failures, ts.Skipped, len(ts.Cases))
	}
	for _, c := range ts.Cases {
		switch c.Name {
		case "transcript/hello":
			if c.Failure != nil || c.Skipped != nil {
				t.Errorf("hello: %+v", c)
			}
		case "transcript/run_text":
			if c.Failure == nil || !strings.Contains(c.Failure.Text, "run event without run_id") || c.Failure.Type != "CONTRACT §9" {
				t.Errorf("run_text: %+v", c.Failure)
			}
		case "transcript/run_tool":
			if c.Skipped == nil || c.Skipped.Message != "prerequisite run failed in transcript/run_text" {
				t.Errorf("run_tool: %+v", c.Skipped)
			}
		default:
			t.Errorf("testcase %q", c.Name)
		}
	}
	// The raw XML has the elements CI tools read.
	b, _ := os.ReadFile(junit)
	for _, el := range []string{"<testsuites ", "<testsuite ", "<testcase ", "<failure ", "<skipped "} {
		if !bytes.Contains(b, []byte(el)) {
			t.Errorf("no %s in:\n%s", el, b)
		}
	}
}

// TestCasesDir runs a case copied from the embedded set out of a folder:
// the kit runs that folder's cases instead of its own.
func TestCasesDir(t *testing.T) {
	dir := t.TempDir()
	b, err := caseFiles.ReadFile("cases/run_tool.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "my_tool.txtar"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := kitRun(t, nil, "-cases", dir, "-run", "^transcript/", hostBin)
	if code != 0 || out != "ok    transcript/my_tool\n1 passed, 0 failed\n" {
		t.Fatalf("exit %d, want 0 and one passing case:\n%s", code, out)
	}
	var list bytes.Buffer
	if code := run([]string{"-list", "-cases", dir, "-fuzz", "0"}, nil, &list, io.Discard); code != 0 || !regexp.MustCompile(`(?m)^protocol +CONTRACT §10 +transcript/my_tool$`).MatchString(list.String()) {
		t.Errorf("-list -cases: exit %d:\n%s", code, list.String())
	}
	// A case file with an error is a usage error, named.
	if err := os.WriteFile(filepath.Join(dir, "broken.txtar"), []byte("-- meta --\nrule: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	if code := run([]string{"-cases", dir, hostBin}, nil, io.Discard, &errOut); code != 2 || !strings.Contains(errOut.String(), "broken.txtar: meta has no level") {
		t.Errorf("a broken case: exit %d, stderr %q", code, errOut.String())
	}
}

func TestListJSON(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"-list", "-json", "-fuzz", "0"}, nil, &out, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var e struct {
			Name, Level, Rule  string
			Requires, Provides []string
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%v: %q", err, l)
		}
		if e.Name == "" || (e.Level != "protocol" && e.Level != "contract") || !strings.HasPrefix(e.Rule, "CONTRACT §") || e.Requires == nil || e.Provides == nil {
			t.Errorf("entry %s", l)
		}
		n++
	}
	cases, _ := loadCases()
	if want := len(cases) + len(fuzzCases(1, 0)) + 1; n != want {
		t.Errorf("%d entries, want %d", n, want)
	}
}

// TestFramingGate: a host that never answers a malformed line fails the
// framing case once; the cases that send malformed lines, the fuzzer's
// included, are skipped instead of each waiting for its timeout.
func TestFramingGate(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "report.xml")
	env := []string{brokenEnv + "=mute-malformed", brokenHostEnv + "=" + hostBin}
	code, out := kitRun(t, env, "-timeout", "2s", "-junit", junit, self)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	if strings.Count(out, "FAIL  ") != 1 || !strings.Contains(out, "FAIL  transcript/framing\n    case line 11: no event within 2s") {
		t.Fatalf("want transcript/framing as the only failure:\n%s", out)
	}
	for _, name := range []string{"transcript/malformed", "transcript/oversized", "fuzz/invalid_utf8/in-string-lone-ff", "fuzz/random/0-"} {
		if !regexp.MustCompile(`(?m)^skip  ` + regexp.QuoteMeta(name) + `\S* \(prerequisite framing failed in transcript/framing\)$`).MatchString(out) {
			t.Errorf("%s not skipped for the framing:\n%s", name, out)
		}
	}
	for _, name := range []string{"transcript/hello", "transcript/models", "transcript/run_text", "transcript/run_tool"} {
		if !strings.Contains(out, "ok    "+name+"\n") {
			t.Errorf("%s did not pass:\n%s", name, out)
		}
	}
	// One wait ran out, not one per malformed line: the skipped cases
	// took no time.
	if n := strings.Count(out, "no event within"); n != 1 {
		t.Errorf("%d waits ran out, want 1:\n%s", n, out)
	}
	for _, c := range readJUnit(t, junit).Suites[0].Cases {
		if c.Skipped != nil && c.Time != "0.000" {
			t.Errorf("skipped %s took %ss", c.Name, c.Time)
		}
	}
}
