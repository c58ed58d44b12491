package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// streams records OnOutput calls; OnOutput is never called concurrently,
// and all calls happen before Run returns.
type streams struct {
	text  map[string]*strings.Builder
	order []string // streams in call order
	bad   []string // violations of the chunk contract
}

func newStreams() *streams {
	return &streams{text: map[string]*strings.Builder{Stdout: {}, Stderr: {}}}
}

func (s *streams) onOutput(stream, chunk string) {
	b, ok := s.text[stream]
	if !ok {
		s.bad = append(s.bad, "unknown stream "+stream)
		return
	}
	if len(chunk) == 0 || len(chunk) > ChunkBytes || !utf8.ValidString(chunk) {
		s.bad = append(s.bad, fmt.Sprintf("bad chunk of %d bytes on %s", len(chunk), stream))
	}
	b.WriteString(chunk)
	s.order = append(s.order, stream)
}

// cancelOn returns an OnOutput that cancels when stdout has shown word.
func cancelOn(word string, cancel func()) func(string, string) {
	var out strings.Builder
	return func(stream, chunk string) {
		if stream == Stdout {
			out.WriteString(chunk)
			if strings.Contains(out.String(), word) {
				cancel()
			}
		}
	}
}

func run(t *testing.T, ctx context.Context, s Spec) Result {
	t.Helper()
	res, err := Run(ctx, s)
	if err != nil {
		t.Fatalf("Run(%q): %v", s.Command, err)
	}
	return res
}

func TestOutputCapturedAndStreamed(t *testing.T) {
	t.Parallel()
	s := testSpec(t, newMark(), "echo out; echo err >&2; echo more")
	st := newStreams()
	s.OnOutput = st.onOutput
	res := run(t, context.Background(), s)
	if res.ExitCode != 0 || res.Signal != "" || res.TimedOut || res.Canceled || res.Truncated {
		t.Errorf("result = %+v", res)
	}
	for _, want := range []string{"out\n", "err\n", "more\n"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("Output %q lacks %q", res.Output, want)
		}
	}
	if len(res.Output) != len("out\nerr\nmore\n") {
		t.Errorf("Output = %q", res.Output)
	}
	if got := st.text[Stdout].String(); got != "out\nmore\n" {
		t.Errorf("streamed stdout = %q", got)
	}
	if got := st.text[Stderr].String(); got != "err\n" {
		t.Errorf("streamed stderr = %q", got)
	}
	if len(st.bad) > 0 {
		t.Error(st.bad)
	}
}

func TestChunksAreBoundedUTF8(t *testing.T) {
	t.Parallel()
	// 3000 × 9 bytes of multibyte characters on stdout, and invalid bytes
	// on stderr.
	s := testSpec(t, newMark(), `for i in $(seq 1 3000); do printf 'é€𝄞'; done; printf '\xff\xfe ok' >&2`)
	st := newStreams()
	s.OnOutput = st.onOutput
	res := run(t, context.Background(), s)
	if len(st.bad) > 0 {
		t.Error(st.bad)
	}
	if got, want := st.text[Stdout].String(), strings.Repeat("é€𝄞", 3000); got != want {
		t.Errorf("streamed stdout: %d bytes, want %d", len(got), len(want))
	}
	if got := st.text[Stderr].String(); got != "\uFFFD ok" {
		t.Errorf("streamed stderr = %q", got)
	}
	if !utf8.ValidString(res.Output) || !strings.Contains(res.Output, "\uFFFD ok") {
		t.Errorf("Output is not the sanitized output")
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	res := run(t, context.Background(), testSpec(t, newMark(), "echo bye; exit 3"))
	if res.ExitCode != 3 || res.Signal != "" || res.Output != "bye\n" {
		t.Errorf("result = %+v", res)
	}
}

func TestKilledBySignal(t *testing.T) {
	t.Parallel()
	res := run(t, context.Background(), testSpec(t, newMark(), "kill -9 $$"))
	if res.ExitCode != -1 || res.Signal != "SIGKILL" || res.TimedOut || res.Canceled {
		t.Errorf("result = %+v", res)
	}
}

// The shell leads its process group, so the common idiom of killing one's
// own group works.
func TestShellLeadsGroup(t *testing.T) {
	t.Parallel()
	res := run(t, context.Background(), testSpec(t, newMark(), `test "$(ps -o pgid= -p $$ | tr -d ' ')" = $$ && echo leader; kill -- -$$`))
	if res.Output != "leader\n" || res.Signal != "SIGTERM" {
		t.Errorf("result = %+v", res)
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	mark := newMark()
	s := testSpec(t, mark, "echo $$; sleep 1000 & sleep 1000 & wait")
	s.Timeout = 200 * time.Millisecond
	res := run(t, context.Background(), s)
	if !res.TimedOut || res.Canceled || res.ExitCode != -1 || res.Signal != "SIGTERM" {
		t.Errorf("result = %+v", res)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	if err != nil {
		t.Fatalf("Output = %q", res.Output)
	}
	if m := groupMembers(t, pgid); len(m) > 0 {
		t.Errorf("group %d still has %+v", pgid, m)
	}
	requireNoneMarked(t, mark)
}

func TestCancelWithTrapGetsOnlyTerm(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := testSpec(t, newMark(), `trap 'echo got TERM; exit 0' TERM; echo ready; sleep 1000 & wait`)
	// A long grace: had the command been SIGKILLed, it would show as
	// Signal (and the test would wait the grace out).
	s.Grace = hangGuard
	s.OnOutput = cancelOn("ready", cancel)
	res := run(t, ctx, s)
	if !res.Canceled || res.TimedOut || res.ExitCode != 0 || res.Signal != "" {
		t.Errorf("result = %+v", res)
	}
	if res.Output != "ready\ngot TERM\n" {
		t.Errorf("Output = %q", res.Output)
	}
}

func TestIgnoredTermGetsKill(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mark := newMark()
	s := testSpec(t, mark, `trap '' TERM; echo ready; sleep 1000`)
	s.Grace = 200 * time.Millisecond
	s.OnOutput = cancelOn("ready", cancel)
	res := run(t, ctx, s)
	if !res.Canceled || res.ExitCode != -1 || res.Signal != "SIGKILL" {
		t.Errorf("result = %+v", res)
	}
	requireNoneMarked(t, mark)
}

// A command that answers SIGTERM by starting an escaping child, then
// ignores it, loses that child to the SIGKILL sweep.
func TestKillSweepCatchesLateEscapees(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mark := newMark()
	s := testSpec(t, mark, `trap 'setsid sleep 1000 & echo spawned' TERM; echo ready; while :; do sleep 0.05; done`)
	s.Grace = 300 * time.Millisecond
	s.OnOutput = cancelOn("ready", cancel)
	res := run(t, ctx, s)
	if !res.Canceled || res.Signal != "SIGKILL" {
		t.Errorf("result = %+v", res)
	}
	requireNoneMarked(t, mark)
}

// What a command leaves behind when its shell exits is ended, including
// processes that left the group and were orphaned, and pipe holders do not
// make Run hang.
func TestLeftoversEnded(t *testing.T) {
	t.Parallel()
	for name, cmd := range map[string]string{
		"background":        "sleep 1000 & echo done",
		"background quiet":  "sleep 1000 >/dev/null 2>&1 & echo done",
		"setsid":            "setsid sleep 1000 & echo done",
		"double fork":       "( setsid sleep 1000 & ); echo done",
		"double fork quiet": "( setsid sleep 1000 >/dev/null 2>&1 & ); echo done",
		"setpgid":           "set -m; sleep 1000 & echo done",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mark := newMark()
			res := run(t, context.Background(), testSpec(t, mark, cmd))
			if res.ExitCode != 0 || res.Output != "done\n" || res.TimedOut {
				t.Errorf("result = %+v", res)
			}
			requireNoneMarked(t, mark)
		})
	}
}

// A line a background job writes just after the shell exits is not lost.
// (The job usually writes after the exit; the test does not depend on it.)
func TestLateOutputKept(t *testing.T) {
	t.Parallel()
	res := run(t, context.Background(), testSpec(t, newMark(), "(sleep 0.01; echo late) & echo early"))
	if res.Output != "early\nlate\n" && res.Output != "late\nearly\n" {
		t.Errorf("Output = %q", res.Output)
	}
}

func TestEscapeesEndedByLadder(t *testing.T) {
	t.Parallel()
	mark := newMark()
	s := testSpec(t, mark, "setsid sleep 1000 & ( setsid sleep 1000 & ); sleep 1000 & wait")
	s.Timeout = 200 * time.Millisecond
	res := run(t, context.Background(), s)
	if !res.TimedOut {
		t.Errorf("result = %+v", res)
	}
	requireNoneMarked(t, mark)
}

func TestHugeOutputBounded(t *testing.T) {
	// Not parallel: it measures the allocations of the whole process.
	const total = 50_000_000
	s := testSpec(t, newMark(), fmt.Sprintf("yes | head -c %d", total))
	s.MaxOutputBytes = 10_000
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := run(t, context.Background(), s)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("Run allocated %d bytes for %d bytes of output", alloc, total)
	}
	if res.ExitCode != 0 || !res.Truncated || len(res.Output) > s.MaxOutputBytes {
		t.Errorf("ExitCode %d, Truncated %v, %d bytes", res.ExitCode, res.Truncated, len(res.Output))
	}
	if !strings.Contains(res.Output, fmt.Sprintf(" of %d bytes shown]\n", total)) {
		t.Errorf("no truncation marker in %q…", res.Output[:200])
	}

	// Streaming still sees every byte.
	n := 0
	s.OnOutput = func(_, chunk string) { n += len(chunk) }
	res = run(t, context.Background(), s)
	if n != total || res.ExitCode != 0 {
		t.Errorf("streamed %d bytes, exit %d", n, res.ExitCode)
	}
}

func TestTruncationKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	s := testSpec(t, newMark(), "seq 1 100000; echo END")
	s.MaxOutputBytes = 1000
	res := run(t, context.Background(), s)
	if !res.Truncated || len(res.Output) > 1000 {
		t.Fatalf("Truncated %v, %d bytes", res.Truncated, len(res.Output))
	}
	if !strings.HasPrefix(res.Output, "1\n2\n3\n") || !strings.HasSuffix(res.Output, "99999\n100000\nEND\n") {
		t.Errorf("Output = %q", res.Output)
	}
	head, tail, ok := strings.Cut(res.Output, "[output truncated: ")
	if !ok {
		t.Fatalf("no marker in %q", res.Output)
	}
	var shown, all int
	if _, err := fmt.Sscanf(tail, "%d of %d bytes shown]", &shown, &all); err != nil {
		t.Fatal(err)
	}
	_, tail, _ = strings.Cut(tail, "]\n")
	if all != len("END\n")+588895 || shown != len(head)+len(tail) {
		t.Errorf("marker says %d of %d; head %d, tail %d", shown, all, len(head), len(tail))
	}
	if len(tail) < len(head) {
		t.Errorf("tail (%d bytes) should be longer than head (%d)", len(tail), len(head))
	}
}

func TestStdinIsDevNull(t *testing.T) {
	t.Parallel()
	s := testSpec(t, newMark(), "cat; readlink /proc/$$/fd/0")
	s.Timeout = hangGuard
	res := run(t, context.Background(), s)
	if res.TimedOut || res.ExitCode != 0 || res.Output != "/dev/null\n" {
		t.Errorf("result = %+v", res)
	}
}

// Nothing the command writes reaches the host's fd 1, which carries the
// protocol.
func TestHostStdoutNotInherited(t *testing.T) {
	// Not parallel: it redirects the process's fd 1.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	saved, err := unix.Dup(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(w.Fd()), 1); err != nil {
		t.Fatal(err)
	}
	savedStdout := os.Stdout
	os.Stdout = w
	restored := false
	restore := func() {
		if !restored {
			restored = true
			os.Stdout = savedStdout
			unix.Dup2(saved, 1)
			unix.Close(saved)
			w.Close()
		}
	}
	defer restore()
	leaked := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		leaked <- string(b)
	}()

	res, err := Run(context.Background(), testSpec(t, newMark(), "echo one; echo two >/dev/stdout; echo three >&2; echo four >/proc/self/fd/1"))
	restore()
	if got := <-leaked; got != "" {
		t.Errorf("the host's stdout received %q", got)
	}
	if err != nil {
		t.Fatal(err)
	}
	// stdout and stderr interleave in arrival order, which may vary.
	lines := strings.Split(res.Output, "\n")
	slices.Sort(lines)
	if !slices.Equal(lines, []string{"", "four", "one", "three", "two"}) {
		t.Errorf("Output = %q", res.Output)
	}
}

// The command gets fds 0–2 only, even when the host holds descriptors
// without close-on-exec (as inherited from its parent).
func TestOnlyStdioInherited(t *testing.T) {
	// Not parallel: the descriptor it opens would reach other tests'
	// exec.Cmd children.
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A descriptor well above the others, without close-on-exec.
	const high = 900
	if err := unix.Dup3(int(f.Fd()), high, 0); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(high)
	if flags, err := unix.FcntlInt(high, unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("fd %d flags %#x, %v", high, flags, err)
	}
	// A spare guard that an earlier test's command started may have
	// forked after the dup but looked at the table before it. A host
	// inherits its descriptors before it starts any guard; here the
	// descriptor is new, so no guard started before it may serve.
	ReleaseSpare()
	res := run(t, context.Background(), testSpec(t, newMark(), "ls /proc/$$/fd; true"))
	if res.Output != "0\n1\n2\n" {
		t.Errorf("the shell's descriptors: %q", res.Output)
	}
}

func TestEnvironmentToken(t *testing.T) {
	t.Parallel()
	s := testSpec(t, newMark(), `printf %s "$OCTET_SHELL_ID"`)
	s.Env = []string{"OCTET_SHELL_ID=outer", "PATH=" + os.Getenv("PATH")}
	res := run(t, context.Background(), s)
	outer, tok, ok := strings.Cut(res.Output, ":")
	if !ok || outer != "outer" || len(tok) < 16 {
		t.Errorf("OCTET_SHELL_ID = %q", res.Output)
	}
}

func TestNotStarted(t *testing.T) {
	t.Parallel()
	base := testSpec(t, newMark(), "echo hi")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for name, tc := range map[string]struct {
		ctx  context.Context
		edit func(*Spec)
		want error
	}{
		"relative dir":   {edit: func(s *Spec) { s.Dir = "work" }, want: ErrInvalidSpec},
		"relative shell": {edit: func(s *Spec) { s.Shell = "bash" }, want: ErrInvalidSpec},
		"NUL":            {edit: func(s *Spec) { s.Command = "echo \x00" }, want: ErrInvalidSpec},
		"negative":       {edit: func(s *Spec) { s.Grace = -1 }, want: ErrInvalidSpec},
		"no shell":       {edit: func(s *Spec) { s.Shell = "/nonexistent/bash" }, want: fs.ErrNotExist},
		"no dir":         {edit: func(s *Spec) { s.Dir = "/nonexistent/dir" }, want: fs.ErrNotExist},
		"canceled":       {ctx: canceled, want: context.Canceled},
	} {
		s := base
		if tc.edit != nil {
			tc.edit(&s)
		}
		ctx := tc.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		if _, err := Run(ctx, s); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	var reg Registry
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := testSpec(t, newMark(), fmt.Sprintf("echo %d; echo %d >&2", i, i))
			s.Registry = &reg
			res, err := Run(context.Background(), s)
			if want := fmt.Sprintf("%d\n%d\n", i, i); err != nil || res.Output != want {
				t.Errorf("run %d: %q, %v", i, res.Output, err)
			}
		})
	}
	wg.Wait()
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if n := len(reg.entries); n != 0 {
		t.Errorf("%d entries still registered", n)
	}
}

// A host killed by SIGKILL leaves no command behind: the shell dies of
// Pdeathsig and its children by the guard.
func TestPdeathsig(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cmd    string
		sleeps int
	}{
		"exec'd":   {"sleep 1000", 1},
		"children": {"sleep 1000 & sleep 1000; :", 2},
		// Processes that left the group: the guard finds them by token.
		"setsid escapees": {"setsid sleep 1000 & ( setsid sleep 1000 & ); sleep 1000", 3},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mark := newMark()
			host := exec.Command(os.Args[0], "-test.run=^$")
			host.Env = append(os.Environ(), helperEnv+"="+tc.cmd, markEnv+"="+mark)
			host.Stdout, host.Stderr = os.Stderr, os.Stderr
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				host.Process.Kill()
				host.Wait()
			}()
			eventually(t, "the helper's sleeps", func() bool {
				return countComm(marked(t, mark), "sleep") == tc.sleeps
			})
			// Everything the helper started: the shell (or the sleep it
			// became), the sleeps, the guard. The guard starts just after
			// the shell; a host killed in between leaves the shell's first
			// children unguarded (see the package documentation).
			var started []proc
			eventually(t, "the guard", func() bool {
				started = descendants(t, host.Process.Pid)
				return slices.ContainsFunc(started, func(p proc) bool { return isGuard(p.pid) })
			})
			t.Cleanup(func() { // only a failed test leaves any
				for _, p := range alive(started) {
					signalProc(p, unix.SIGKILL)
				}
			})
			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			host.Wait()
			eventually(t, "the helper's children to die", func() bool {
				return len(alive(started)) == 0 && countComm(marked(t, mark), "sleep") == 0
			})
		})
	}
}

// isGuard reports whether pid is a guard process.
func isGuard(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.Contains(string(b), "\x00octet-shell-guard\x00") || strings.HasPrefix(string(b), nsInitName+"\x00")
}
