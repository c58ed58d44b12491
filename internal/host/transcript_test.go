package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/internal/schematest"
	"octet.dev/host/runtime"
)

var update = flag.Bool("update", false, "rewrite the expected output of transcript tests")

// A transcript file has a comment, then "-- in --" with request lines and
// "-- out --" with the exact event lines the host writes, followed by a
// line "exit N". In the in section, a line "@big N" stands for a line of N
// bytes of 'x'.
type transcript struct {
	comment string
	in      []string
	out     string
}

func parseTranscript(t *testing.T, data string) transcript {
	t.Helper()
	var tr transcript
	head, rest, ok := strings.Cut(data, "-- in --\n")
	if !ok {
		t.Fatal("transcript has no -- in -- section")
	}
	tr.comment = head
	in, out, ok := strings.Cut(rest, "-- out --\n")
	if !ok {
		t.Fatal("transcript has no -- out -- section")
	}
	tr.in = strings.SplitAfter(in, "\n")
	tr.out = out
	return tr
}

// serveLines runs the host in-process over pipes, feeding lines, and
// returns everything it wrote plus its exit status line.
func serveLines(t *testing.T, agent *runtime.Agent, lines []string) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := New(Config{In: inR, Out: outW, Agent: agent, Version: "test"})
	done := make(chan error, 1)
	go func() {
		err := h.Serve(context.Background())
		outW.Close()
		inR.Close() // unblock the feeder if the host stopped reading
		done <- err
	}()
	go func() {
		defer inW.Close()
		for _, l := range lines {
			if n, ok := strings.CutPrefix(l, "@big "); ok {
				size, err := strconv.Atoi(strings.TrimSpace(n))
				if err != nil {
					panic(err)
				}
				l = strings.Repeat("x", size) + "\n"
			}
			if _, err := io.WriteString(inW, l); err != nil {
				return
			}
		}
	}()
	var out bytes.Buffer
	if _, err := io.Copy(&out, bufio.NewReader(outR)); err != nil {
		t.Fatal(err)
	}
	err := <-done
	code := 0
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	} else if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	fmt.Fprintf(&out, "exit %d\n", code)
	return out.String()
}

func newTestAgent(t *testing.T) *runtime.Agent {
	t.Helper()
	home := t.TempDir()
	a, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr := parseTranscript(t, string(data))
			got := serveLines(t, newTestAgent(t), tr.in)
			if *update {
				var b strings.Builder
				b.WriteString(tr.comment)
				b.WriteString("-- in --\n")
				b.WriteString(strings.Join(tr.in, ""))
				b.WriteString("-- out --\n")
				b.WriteString(got)
				if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(tr.out, got); diff != "" {
				t.Errorf("events (-want +got), rerun with -update to accept:\n%s", diff)
			}
			checkInvariants(t, got)
			checkSchema(t, tr.in, got)
		})
	}
}

// checkSchema validates every event of a transcript against the JSON
// Schema, and every request line by the host's verdict (schematest.Session).
func checkSchema(t *testing.T, in []string, out string) {
	t.Helper()
	var s schematest.Session
	for _, l := range in {
		if !strings.HasPrefix(l, "@big ") {
			s.Sent([]byte(l))
		}
	}
	for _, l := range strings.SplitAfter(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "exit ") {
			s.Got(t, []byte(l))
		}
	}
}
