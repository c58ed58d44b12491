package codex

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Child processes re-execute the test binary with childEnv set; TestMain
// then runs runChild instead of the tests. A child reports on stdout.
const (
	childEnv    = "OCTET_CODEX_TEST_CHILD"
	homeEnv     = "OCTET_CODEX_TEST_HOME"
	tokenURLEnv = "OCTET_CODEX_TEST_TOKEN_URL"
)

// runChild "credential": prints "ready", waits for a line on stdin (the
// start signal; EOF, when the parent dies, ends the child), calls
// Credential once and prints "ok <access token>" or "error: <err>".
func runChild(role string) int {
	if role != "credential" {
		fmt.Fprintln(os.Stderr, "unknown child role", role)
		return 2
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 3
	}
	s := &Store{Home: os.Getenv(homeEnv), TokenURL: os.Getenv(tokenURLEnv)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cred, err := s.Credential(ctx)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ok", cred.AccessToken)
	return 0
}

// TestConcurrentGoroutines: many goroutines, each with its own Store (and
// so its own lock descriptor), ask for an expired credential at once, from
// first use (import) on. Exactly one refresh reaches the endpoint; everyone
// gets the refreshed token.
func TestConcurrentGoroutines(t *testing.T) {
	home := t.TempDir()
	fake, oldAccess, _ := expiredSetup(t, home)
	fake.set(func(f *fakeToken) { f.delay = 50 * time.Millisecond })
	shared := newStore(t, home, fake.url())

	const n = 8
	start := make(chan struct{})
	var wg sync.WaitGroup
	creds := make([]Credential, n)
	errs := make([]error, n)
	for i := range n {
		s := shared
		if i%2 == 1 {
			s = newStore(t, home, fake.url())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			creds[i], errs[i] = s.Credential(context.Background())
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if creds[i] != creds[0] || creds[i].AccessToken == oldAccess {
			t.Errorf("goroutine %d got another or the old token", i)
		}
	}
	if got := fake.requests.Load(); got != 1 {
		t.Errorf("%d refresh requests, want exactly 1", got)
	}
}

// TestConcurrentProcesses: two child processes and the parent ask at once
// for the same expired credential. Exactly one refresh request arrives; the
// others wait for the lock and find the refreshed file.
func TestConcurrentProcesses(t *testing.T) {
	home := t.TempDir()
	fake, oldAccess, _ := expiredSetup(t, home)
	fake.set(func(f *fakeToken) { f.delay = 100 * time.Millisecond })

	type child struct {
		cmd    *exec.Cmd
		stdin  io.WriteCloser
		stdout *bufio.Reader
	}
	var children []child
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=credential", homeEnv+"="+home, tokenURLEnv+"="+fake.url())
		cmd.Stderr = new(bytes.Buffer)
		cmd.WaitDelay = 5 * time.Second
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stdin.Close()
			cmd.Process.Kill()
			cmd.Wait()
		})
		c := child{cmd, stdin, bufio.NewReader(out)}
		if line, err := c.stdout.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("child start: %q %v (stderr %s)", line, err, cmd.Stderr)
		}
		children = append(children, c)
	}

	s := newStore(t, home, fake.url())
	var parent Credential
	var parentErr error
	var wg sync.WaitGroup
	wg.Add(1)
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		defer wg.Done()
		parent, parentErr = s.Credential(context.Background())
	}()

	var tokens []string
	for i, c := range children {
		line, err := c.stdout.ReadString('\n')
		if err != nil {
			t.Fatalf("child %d: %v (stderr %s)", i, err, c.cmd.Stderr)
		}
		tok, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "ok ")
		if !ok {
			t.Fatalf("child %d: %s", i, line)
		}
		tokens = append(tokens, tok)
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child %d exit: %v", i, err)
		}
	}
	wg.Wait()
	if parentErr != nil {
		t.Fatal(parentErr)
	}
	for i, tok := range tokens {
		if tok != parent.AccessToken || tok == oldAccess {
			t.Errorf("child %d got another or the old token", i)
		}
	}
	if got := fake.requests.Load(); got != 1 {
		t.Errorf("%d refresh requests, want exactly 1", got)
	}
}
