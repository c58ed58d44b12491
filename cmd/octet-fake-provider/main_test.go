package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"octet.dev/host/internal/testbin"
)

// bin is the command, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	bin = testbin.MustBuild(testbin.FakeProvider)
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

// proc is a running command.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

func start(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return p
}

// urls reads the line with the base URLs.
func (p *proc) urls(t *testing.T) urls {
	t.Helper()
	line, err := p.stdout.ReadString('\n')
	if err != nil {
		_ = p.cmd.Wait()
		t.Fatalf("reading the URL line: %v; stderr: %s", err, p.stderr)
	}
	var u urls
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		t.Fatalf("URL line %q: %v", line, err)
	}
	if !strings.HasPrefix(u.Root, "http://127.0.0.1:") || u.OpenAICompatible != u.Root+"/v1" ||
		u.OpenAIResponses != u.Root+"/v1" || u.AnthropicMessages != u.Root {
		t.Fatalf("URL line %q", line)
	}
	return u
}

// wait waits for the command to exit and returns its exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("waiting: %v", err)
	return -1
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

const chatBody = `{"model":"gpt-test","stream":true,"messages":[{"role":"user","content":"hi"}]}`

func TestScriptAndSIGTERM(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"hello from the script","chunk":-1}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, "-addr", "127.0.0.1:0", "-script", script)
	u := p.urls(t)
	status, body := post(t, u.OpenAICompatible+"/chat/completions", chatBody)
	if status != http.StatusOK || !strings.Contains(body, `"content":"hello from the script"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("chat answer %d:\n%s", status, body)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d after SIGTERM; stderr: %s", code, p.stderr)
	}
}

func TestFixtureAndStdinEOF(t *testing.T) {
	p := start(t, "-fixture", "anthropic/llm-anthropic_text")
	u := p.urls(t)
	want, err := os.ReadFile("../../runtime/fakeprovider/fixtures/anthropic/llm-anthropic_text.sse")
	if err != nil {
		t.Fatal(err)
	}
	status, body := post(t, u.AnthropicMessages+"/v1/messages", `{"model":"m","stream":true,"max_tokens":10,"messages":[]}`)
	if status != http.StatusOK || body != string(want) {
		t.Errorf("fixture answer %d:\n%s", status, body)
	}
	// The other modes have no script.
	if status, _ := post(t, u.OpenAICompatible+"/chat/completions", chatBody); status != http.StatusInternalServerError {
		t.Errorf("chat without a script: %d", status)
	}
	p.stdin.Close()
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d after stdin EOF; stderr: %s", code, p.stderr)
	}
}

func TestSIGINT(t *testing.T) {
	p := start(t, "-fixture", "openai-compatible/openai-python_text")
	p.urls(t)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d after SIGINT; stderr: %s", code, p.stderr)
	}
}

func TestRefusals(t *testing.T) {
	badScript := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badScript, []byte(`{"turns":[{"txt":"typo"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-addr", "0.0.0.0:0", "-fixture", "anthropic/llm-anthropic_text"}, "not a loopback address"},
		{[]string{"-addr", ":8080", "-fixture", "anthropic/llm-anthropic_text"}, "not a loopback address"},
		{[]string{}, "give -script or -fixture"},
		{[]string{"-fixture", "anthropic/nope"}, "no fixture"},
		{[]string{"-fixture", "chat/openai-python_text"}, "unknown mode"},
		{[]string{"-script", badScript}, "unknown field"},
		{[]string{"-bogus"}, "flag provided but not defined"},
	} {
		p := start(t, tc.args...)
		if code := p.wait(t); code != 2 || !strings.Contains(p.stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q (want 2 and %q)", tc.args, code, p.stderr, tc.want)
		}
	}
}

func TestList(t *testing.T) {
	p := start(t, "-list")
	out, _ := io.ReadAll(p.stdout)
	if code := p.wait(t); code != 0 || !strings.Contains(string(out), "anthropic-messages/llm-anthropic_text\n") ||
		!strings.Contains(string(out), "openai-responses/errors/vercel_429-insufficient-quota\n") {
		t.Errorf("-list: exit %d:\n%s", code, out)
	}
}
