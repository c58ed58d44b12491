package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec"
)

// env is what a case's placeholders stand for.
type caseEnv struct {
	workspace, sessionDir, baseURL, apiKey string
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func (ce caseEnv) expand(line []byte) []byte {
	if !bytes.Contains(line, []byte("{{")) {
		return line
	}
	r := strings.NewReplacer("{{workspace}}", jsonEscape(ce.workspace), "{{session_dir}}", jsonEscape(ce.sessionDir),
		"{{base_url}}", jsonEscape(ce.baseURL), "{{api_key}}", jsonEscape(ce.apiKey))
	return []byte(r.Replace(string(line)))
}

// runCase runs c on a fresh host and returns nil or why it failed.
func (k *kit) runCase(c kcase) error {
	dir, err := os.MkdirTemp(k.tmp, "case-")
	if err != nil {
		return err
	}
	ce := caseEnv{workspace: filepath.Join(dir, "ws"), sessionDir: filepath.Join(dir, "sessions"), baseURL: k.fake.BaseURL(fakeprovider.ModeChat), apiKey: fakeAPIKey}
	if err := os.Mkdir(ce.workspace, 0o755); err != nil {
		return err
	}
	for name, content := range c.files {
		if err := os.WriteFile(filepath.Join(ce.workspace, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	script := fakeprovider.Script{}
	if c.script != nil {
		script = *c.script
	}
	k.fake.SetScript(script)
	for _, f := range c.faults {
		k.fake.InjectFault(f)
	}
	// The case that checks the handshake waits less: hello does no I/O,
	// and a host that does not answer it fails every other case too.
	wait := k.cfg.timeout
	if slices.Contains(c.provides, prereqHandshake) {
		wait = k.cfg.handshakeTimeout
	}
	s, err := k.newSession(wait)
	if err != nil {
		return err
	}
	defer s.h.kill()
	for _, st := range c.steps {
		if err := s.do(st, ce.expand(st.line)); err != nil {
			return fmt.Errorf("case line %d: %w", st.src, err)
		}
	}
	if c.exit != nil {
		return s.finish(*c.exit)
	}
	return nil
}

// session is one running host and the transcript it wrote so far.
type session struct {
	k       *kit
	h       *hostProc
	timeout time.Duration // longest wait for one event, and for the exit
	frames  []spec.Frame
}

func (k *kit) newSession(timeout time.Duration) (*session, error) {
	h, err := startHost(k.cfg.host, k.cfg.args, k.cfg.env)
	if err != nil {
		return nil, err
	}
	return &session{k: k, h: h, timeout: timeout}, nil
}

// failure wraps err with the tail of the host's stderr.
func (s *session) failure(err error) error {
	if tail := s.h.stderr.String(); tail != "" {
		if len(tail) > 600 {
			tail = "…" + tail[len(tail)-600:]
		}
		return fmt.Errorf("%w\n    host stderr: %s", err, strings.ReplaceAll(tail, "\n", "\n    "))
	}
	return err
}

// readEvent reads, parses and records the next event, checking the session
// invariants on the transcript so far.
func (s *session) readEvent(what string) (*event, error) {
	line, err := s.h.next(s.timeout)
	if err != nil {
		if errors.Is(err, errTimeout) {
			return nil, s.failure(fmt.Errorf("no event within %v while waiting for %s", s.timeout, what))
		}
		if errors.Is(err, io.EOF) {
			return nil, s.failure(fmt.Errorf("the host closed stdout while the kit waited for %s", what))
		}
		return nil, s.failure(err)
	}
	e, err := parseEvent(line)
	if err != nil {
		return nil, fmt.Errorf("%v: %.300q", err, line)
	}
	s.frames = append(s.frames, e.frame())
	if err := spec.All(s.frames); err != nil {
		return nil, fmt.Errorf("session invariants: %v (event %s)", err, e)
	}
	return e, nil
}

// do sends line and checks what answers it against st.exp.
func (s *session) do(st step, line []byte) error {
	s.h.send(line)
	if st.exp.none {
		return nil // finish checks that nothing more came
	}
	var evs []*event
	for {
		e, err := s.readEvent(st.exp.String())
		if err != nil {
			return err
		}
		evs = append(evs, e)
		if isTerminal(e.Type) {
			break
		}
	}
	return s.k.checkAnswer(st.exp, line, evs)
}

// finish closes stdin and checks that the host writes nothing more, that
// every request got its terminal event, and the exit status.
func (s *session) finish(code int) error {
	s.h.closeStdin()
	line, err := s.h.next(s.timeout)
	switch {
	case err == nil:
		if e, perr := parseEvent(line); perr == nil {
			s.frames = append(s.frames, e.frame())
			if verr := spec.All(s.frames); verr != nil {
				return fmt.Errorf("after the last answer: session invariants: %v (event %s)", verr, e)
			}
		}
		return fmt.Errorf("an event after the last answer: %.300q", line)
	case errors.Is(err, errTimeout):
		return s.failure(fmt.Errorf("stdout still open %v after stdin closed", s.timeout))
	case !errors.Is(err, io.EOF):
		return s.failure(err)
	}
	if err := spec.Complete(s.frames); err != nil {
		return err
	}
	got, err := s.h.wait(s.timeout)
	if err != nil {
		return s.failure(err)
	}
	if got != code {
		return s.failure(fmt.Errorf("exit status %d, want %d", got, code))
	}
	return nil
}
