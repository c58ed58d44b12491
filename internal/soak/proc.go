package soak

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Sample is one look at the host process.
type Sample struct {
	// Runs is how many runs had ended when the sample was taken.
	Runs int `json:"runs"`
	// RSSKiB and HWMKiB are the resident set and its peak so far
	// (/proc/<pid>/status VmRSS and VmHWM), in KiB; -1 when unreadable.
	RSSKiB int64 `json:"rss_kib"`
	HWMKiB int64 `json:"hwm_kib"`
	// FDs is the number of open file descriptors (/proc/<pid>/fd); -1
	// when the directory cannot be read (another user's non-dumpable
	// process: the host makes itself non-dumpable, so only root or the
	// owner with CAP_SYS_PTRACE can list it).
	FDs int `json:"fds"`
	// Threads is the number of OS threads (/proc/<pid>/status Threads).
	Threads int `json:"threads"`
	// Goroutines is the number of live goroutines in the latest Go
	// scheduler dump the host wrote to stderr (see goroutineWatch), -1
	// before the first dump.
	Goroutines int `json:"goroutines"`
	// ElapsedMS is the time since the soak started.
	ElapsedMS int64 `json:"elapsed_ms"`
}

// sampleProc reads the figures of process pid from /proc.
func sampleProc(pid int) Sample {
	s := Sample{RSSKiB: -1, HWMKiB: -1, FDs: -1, Threads: -1, Goroutines: -1}
	dir := "/proc/" + strconv.Itoa(pid)
	if raw, err := os.ReadFile(dir + "/status"); err == nil {
		for line := range strings.SplitSeq(string(raw), "\n") {
			key, val, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			fields := strings.Fields(val)
			if len(fields) == 0 {
				continue
			}
			n, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				continue
			}
			switch key {
			case "VmRSS":
				s.RSSKiB = n
			case "VmHWM":
				s.HWMKiB = n
			case "Threads":
				s.Threads = int(n)
			}
		}
	}
	if ents, err := os.ReadDir(dir + "/fd"); err == nil {
		s.FDs = len(ents)
	}
	return s
}

// goroutineWatch reads the host's stderr. The host runs with
// GODEBUG=schedtrace=<ms>,scheddetail=1, so the Go runtime writes a
// scheduler dump to stderr every <ms>: a "SCHED" line, then one line per
// P, M and goroutine ("  G<id>: status=<n>(<wait reason>) …"). A dump's
// goroutines are counted when the next one begins; dead ones (status 6,
// kept by the runtime for reuse) are left out. Every other line is the
// host's own log and is kept, bounded, for the report.
type goroutineWatch struct {
	mu       sync.Mutex
	last     int // live goroutines of the latest complete dump; -1 before
	peak     int
	counting bool
	current  int
	tail     []string // the latest log lines, at most tailLines
	// log, when set, receives every log line (Config.HostLog); done is
	// closed when consume returns.
	log  io.Writer
	done chan struct{}
}

const tailLines = 40

func newGoroutineWatch(log io.Writer) *goroutineWatch {
	return &goroutineWatch{last: -1, peak: -1, log: log, done: make(chan struct{})}
}

// gDead is the runtime's _Gdead status.
const gDead = 6

func (w *goroutineWatch) consume(r io.Reader) {
	defer close(w.done)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			w.line(bytes.TrimRight(line, "\r\n"))
		}
		switch err {
		case nil:
		case bufio.ErrBufferFull:
			// A very long log line: its rest is read as further lines.
		default:
			return
		}
	}
}

func (w *goroutineWatch) line(line []byte) {
	if i := bytes.Index(line, []byte(`{"level":`)); i > 0 {
		// The host's log line landed inside a dump line: the Go runtime
		// writes a dump line in pieces, zerolog a log line in one write.
		// The log line is whole; the dump's piece before it goes on.
		w.line(line[i:])
		line = line[:i]
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case bytes.HasPrefix(line, []byte("SCHED ")):
		w.finishDump()
		w.counting, w.current = true, 0
	case w.counting && (bytes.HasPrefix(line, []byte("  G")) || bytes.HasPrefix(line, []byte("  P")) || bytes.HasPrefix(line, []byte("  M"))):
		if rest, ok := bytes.CutPrefix(line, []byte("  G")); ok {
			_, status, ok := bytes.Cut(rest, []byte("status="))
			if !ok {
				return
			}
			end := bytes.IndexFunc(status, func(r rune) bool { return r < '0' || r > '9' })
			if end < 0 {
				end = len(status)
			}
			if n, err := strconv.Atoi(string(status[:end])); err == nil && n != gDead {
				w.current++
			}
		}
	default:
		// A log line ends a dump too (the dump is written in one go,
		// though a log line may cut into it; the count then stays low
		// for that one dump).
		w.finishDump()
		if w.log != nil {
			_, _ = w.log.Write(append(line, '\n'))
			if bytes.Contains(line, []byte(`"level":"trace"`)) {
				return // the tail is for the host's own log, not transitions
			}
		}
		if len(w.tail) == tailLines {
			w.tail = w.tail[1:]
		}
		w.tail = append(w.tail, string(line))
	}
}

func (w *goroutineWatch) finishDump() {
	if !w.counting {
		return
	}
	w.counting = false
	w.last = w.current
	w.peak = max(w.peak, w.current)
}

// goroutines returns the live goroutines of the latest dump and the
// highest count seen, both -1 before the first dump.
func (w *goroutineWatch) goroutines() (last, peak int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last, w.peak
}

// logTail returns the latest log lines of the host.
func (w *goroutineWatch) logTail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.tail, "\n")
}
