package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tests of the bounds every tool keeps whatever its input: it notices
// cancellation promptly, read's work is proportional to
// what it returns (item 11), and grep's memory does not grow with file size
// or GOMAXPROCS (item 13).

const (
	// hangGuard is how long a call may take before the test gives up on
	// it as hung. It is the failure bound, far above what a passing run
	// needs.
	hangGuard = 5 * time.Second
	// promptBound is how soon after the cancellation a call must have
	// returned. It takes microseconds for read and about 10 ms for grep
	// with a slow pattern (a few hundred ms under the race detector, which
	// slows the regular expression tenfold); the bound leaves room for a
	// loaded machine and is still far below the old behaviour (tens of
	// seconds for a 16 GiB read, over 5 s for a grep of a 31 MiB file).
	promptBound = 2 * time.Second
)

// textHead returns n lines of text, enough (n ≥ 200) to pass the binary
// sniff of the first 8 KiB.
func textHead(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "head line %04d: plain text that passes the binary sniff\n", i)
	}
	return b.String()
}

// sparseFile writes head to ws/name and extends the file to size bytes
// with a hole, so the rest reads as NUL bytes with no newline at a cost of
// no disk space. It skips the test when the file system refuses or fills
// the hole.
func sparseFile(t *testing.T, ws, name, head string, size int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(ws, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("the file system refuses a sparse file of %d bytes: %v", size, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks*512 > 64<<20 {
		t.Skipf("the file system does not keep %s sparse (%d blocks)", name, st.Blocks)
	}
}

// runCanceled runs a tool, cancels its context after delay, and returns
// its outcome and how long after the cancellation it returned. A call still
// running hangGuard after the cancellation fails the test.
func runCanceled(t *testing.T, env Env, name, args string, delay time.Duration) (Result, error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res Result
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := Run(ctx, env, name, []byte(args))
		done <- outcome{res, err, time.Now()}
	}()
	var o outcome
	select {
	case o = <-done:
		t.Fatalf("%s %s returned before the cancellation: %v %q", name, args, o.err, o.res.Output)
	case <-time.After(delay):
	}
	canceledAt := time.Now()
	cancel()
	select {
	case o = <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s %s still running %v after the cancellation", name, args, hangGuard)
	}
	return o.res, o.err, o.at.Sub(canceledAt)
}

func assertCanceledPromptly(t *testing.T, name string, res Result, err error, after time.Duration) {
	t.Helper()
	t.Logf("%s returned %v after the cancellation", name, after)
	if codeOf(err) != CodeCanceled {
		t.Errorf("%s: got %v %q, want code %s", name, err, res.Output, CodeCanceled)
	}
	if after > promptBound {
		t.Errorf("%s: returned %v after the cancellation, want well under %v", name, after, promptBound)
	}
}

// TestCancelReadSparse: reaching an offset beyond a 16 GiB line is real
// work, and the call must still notice a cancellation promptly (the old
// read checked only every 4096 lines, so it read all 16 GiB first).
func TestCancelReadSparse(t *testing.T) {
	env, ws, _ := newEnv(t, nil)
	sparseFile(t, ws, "sparse.txt", textHead(200), 16<<30)
	res, err, after := runCanceled(t, env, "read", `{"path":"sparse.txt","offset":100000}`, 50*time.Millisecond)
	assertCanceledPromptly(t, "read", res, err, after)
}

// slowText is about size bytes of short text lines on which slowPattern
// (no literal to look for, so the regular expression sees every byte) runs
// at a few MB/s.
func slowText(size int) string {
	line := "the quick brown fox jumps over the lazy dog 0123 and then some more words\n"
	return strings.Repeat(line, size/len(line))
}

const slowPattern = `(\w+\s*){3}Z\d`

// TestCancelGrepSlowPattern: one file that takes seconds to search must
// not delay the cancellation (the old grep searched a whole file between
// checks).
func TestCancelGrepSlowPattern(t *testing.T) {
	text := slowText(31 << 20)
	files := map[string]string{"big.txt": text}
	for i := range 4 {
		files[fmt.Sprintf("tree/f%d.txt", i)] = text
	}
	env, _, _ := newEnv(t, files)
	for _, tc := range []struct{ name, args string }{
		{"file", `{"pattern":` + quote(slowPattern) + `,"path":"big.txt"}`},
		{"tree", `{"pattern":` + quote(slowPattern) + `,"path":"tree"}`},
		{"tree ignore case", `{"pattern":` + quote(slowPattern) + `,"path":"tree","ignore_case":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err, after := runCanceled(t, env, "grep", tc.args, 50*time.Millisecond)
			assertCanceledPromptly(t, "grep "+tc.name, res, err, after)
		})
	}
}

// lateCancel is a context that reads as canceled from the second call of
// Err on: Run's own check before the tool starts passes, and every later
// check sees the cancellation. It tells whether a tool checks again,
// without depending on timing.
type lateCancel struct {
	context.Context
	mu    sync.Mutex
	calls int
	done  chan struct{}
}

func newLateCancel() *lateCancel {
	return &lateCancel{Context: context.Background(), done: make(chan struct{})}
}

func (c *lateCancel) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.calls < 2 {
		return nil
	}
	if c.calls == 2 {
		close(c.done)
	}
	return context.Canceled
}

func (c *lateCancel) Done() <-chan struct{} { return c.done }

// TestCancelChecked: a call canceled after it started reports canceled and
// changes nothing (ls and edit used to finish, and edit and write to
// replace the file, whatever the context said).
func TestCancelChecked(t *testing.T) {
	env, ws, _ := newEnv(t, map[string]string{"a.txt": "alpha\n", "dir/b.txt": "beta\n"})
	for _, tc := range []struct{ name, args string }{
		{"read", `{"path":"a.txt"}`},
		{"ls", `{"path":"dir"}`},
		{"find", `{"pattern":"*.txt"}`},
		{"edit", `{"path":"a.txt","old_text":"alpha","new_text":"gamma"}`},
		{"write", `{"path":"c.txt","content":"new"}`},
	} {
		res, err := Run(newLateCancel(), env, tc.name, []byte(tc.args))
		if codeOf(err) != CodeCanceled {
			t.Errorf("%s canceled after it started: got %v %q, want code %s", tc.name, err, res.Output, CodeCanceled)
		}
	}
	if got := readWS(t, ws, "a.txt"); got != "alpha\n" {
		t.Errorf("a canceled edit changed a.txt to %q", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "c.txt")); err == nil {
		t.Errorf("a canceled write created c.txt")
	}
}

// TestEditLargeFile: edit reads a file whole, so it refuses one larger than
// its bound before reading it, instead of reading gigabytes it cannot
// cancel.
func TestEditLargeFile(t *testing.T) {
	env, ws, _ := newEnv(t, nil)
	sparseFile(t, ws, "big.txt", textHead(200), 32<<20+1)
	start := time.Now()
	_, err := Run(context.Background(), env, "edit", []byte(`{"path":"big.txt","old_text":"head line 0001","new_text":"first"}`))
	if codeOf(err) != CodeFileTooLarge {
		t.Errorf("edit of a file over the bound: %v, want code %s", err, CodeFileTooLarge)
	}
	if d := time.Since(start); d > promptBound {
		t.Errorf("edit took %v to refuse", d)
	}
}
