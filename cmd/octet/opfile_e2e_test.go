package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

// hostile makes the operator files a run must refuse at once rather than
// hang on (a FIFO) or read whole (/dev/zero, a 1 GiB sparse file).
var hostile = []struct {
	name string
	make func(t *testing.T, path string)
	want string
}{
	{"FIFO", func(t *testing.T, p string) {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}, "is a named pipe (FIFO)"},
	{"dev zero", func(t *testing.T, p string) {
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
	}, "is a character device"},
	{"sparse GiB", func(t *testing.T, p string) {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(1 << 30); err != nil {
			t.Fatal(err)
		}
	}, "is larger than"},
}

// runWithin runs the binary and fails the test when it does not exit in
// 10 s (it is then killed).
func (e *env) runWithin(t *testing.T, args ...string) result {
	t.Helper()
	cmd := e.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return result{out.String(), errb.String(), exitCode(t, err)}
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("octet %q did not exit within 10 s; stderr:\n%s", args, errb.String())
		return result{}
	}
}

// TestHostileSettingsFile: a run whose ~/.octet/settings.json is a FIFO,
// a link to /dev/zero or a 1 GiB sparse file is refused at once with
// config_invalid naming the file and what it is.
func TestHostileSettingsFile(t *testing.T) {
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			e := newEnv(t, done)
			os.MkdirAll(filepath.Join(e.home, ".octet"), 0o700)
			h.make(t, filepath.Join(e.home, ".octet", "settings.json"))
			r := e.runWithin(t, e.args("-p", "x")...)
			if r.code != 1 || !strings.Contains(r.stderr, "config_invalid") || !strings.Contains(r.stderr, "~/.octet/settings.json "+h.want) {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
		})
	}
}

// TestHostileCredentialFile: a catalog route's
// ~/.octet/credentials/<provider>.json that is a FIFO, a link to /dev/zero
// or a 1 GiB sparse file is refused at once with config_invalid.
func TestHostileCredentialFile(t *testing.T) {
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			e := newEnv(t, done)
			os.MkdirAll(filepath.Join(e.home, ".octet", "credentials"), 0o700)
			cfg := `{"providers":{"lab":{"base_url":"` + e.fake.BaseURL(fakeprovider.ModeChat) + `","provider_mode":"openai-compatible",` +
				`"models":[{"id":"lab-model","context_window_tokens":32768,"max_output_tokens":4096}]}}}`
			if err := os.WriteFile(filepath.Join(e.home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			h.make(t, filepath.Join(e.home, ".octet", "credentials", "lab.json"))
			r := e.runWithin(t, "--model", "lab-model", "-p", "x", "--workspace", e.ws)
			if r.code != 1 || !strings.Contains(r.stderr, "config_invalid") || !strings.Contains(r.stderr, "~/.octet/credentials/lab.json "+h.want) {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			// A regular credential file still works.
			os.Remove(filepath.Join(e.home, ".octet", "credentials", "lab.json"))
			os.WriteFile(filepath.Join(e.home, ".octet", "credentials", "lab.json"), []byte(`{"api_key":"k-123456789"}`), 0o600)
			if r := e.runWithin(t, "--model", "lab-model", "-p", "x", "--workspace", e.ws); r.code != 0 || r.stdout != "The answer is 42.\n" {
				t.Fatalf("regular credential file: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestLoginHostileSettings: `octet --login copilot` with a FIFO (or
// /dev/zero) settings file stops at once naming it, instead of blocking
// where SIGINT could not reach it; a SIGINT sent meanwhile ends it too.
func TestLoginHostileSettings(t *testing.T) {
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			e := newEnv(t)
			os.MkdirAll(filepath.Join(e.home, ".octet"), 0o700)
			h.make(t, filepath.Join(e.home, ".octet", "settings.json"))
			r := e.runWithin(t, "--login", "copilot", "--headless")
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "~/.octet/settings.json "+h.want) {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
	t.Run("SIGINT", func(t *testing.T) {
		e := newEnv(t)
		os.MkdirAll(filepath.Join(e.home, ".octet"), 0o700)
		syscall.Mkfifo(filepath.Join(e.home, ".octet", "settings.json"), 0o600)
		cmd := e.command("--login", "copilot", "--headless")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			// Refused (1) before the signal came, or interrupted (130), or
			// killed by SIGINT before its handler was installed.
			if code := exitStatus(err); code != 1 && code != 130 && code != -int(syscall.SIGINT) {
				t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
			}
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Fatal("octet --login copilot ignored SIGINT")
		}
	})
}

// exitStatus is the exit code, or minus the signal that killed it.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(interface{ Sys() any }); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			if ws.Signaled() {
				return -int(ws.Signal())
			}
			return ws.ExitStatus()
		}
	}
	return -1000
}
