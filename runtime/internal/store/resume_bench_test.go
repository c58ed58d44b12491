package store

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// checkpointedRecords returns n records shaped like realisticRecords with a
// local compaction checkpoint after every 500 records: a 6 KiB handoff with
// file evidence, keeping the last dozen messages before it.
func checkpointedRecords(n int) []Record {
	base := realisticRecords(n)
	summary := strings.Repeat("## Progress\n- Done: read internal/store/session.go and ran go test ./...\n", 80)
	out := make([]Record, 0, n)
	msgs := 0
	for _, r := range base {
		if len(out) == n {
			break
		}
		out = append(out, r)
		if _, ok := r.Body.(Message); ok {
			msgs++
		}
		if len(out)%500 == 499 && len(out) < n {
			out = append(out, Record{Body: Compaction{
				Kind: "local", Reason: "threshold", Summary: summary + "<read-files>\na.go\n</read-files>", SummaryText: summary,
				ReadFiles: []string{"a.go", "internal/store/session.go"}, ModifiedFiles: []string{"b.go"},
				FirstKept: max(0, msgs-12), TokensBefore: 120000, TokensAfterEstimate: 9000,
			}})
		}
	}
	return out
}

// resumeChild opens the session named by dirEnv and idEnv as a resumed run
// does (load, then the conversation from the newest checkpoint) and prints
// the elapsed nanoseconds and its own peak RSS (VmHWM, KiB).
func resumeChild(dir, id string) int {
	t0 := time.Now()
	s, err := Open(dir, id, Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	msgs := s.Messages()
	elapsed := time.Since(t0)
	if len(msgs) == 0 || msgs[0].Text == "" || !strings.HasPrefix(msgs[0].Text, SummaryPrefix) {
		fmt.Println("error: the conversation does not start at a checkpoint")
		return 1
	}
	recs := len(s.slots)
	s.Close()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	hwm := -1
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm, _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	fmt.Println(elapsed.Nanoseconds(), hwm, recs)
	return 0
}

// BenchmarkResume100kCheckpoints resumes a 100,000-record session with a
// compaction checkpoint every 500 records, written by this package's own
// Append, in a fresh child process per iteration (re-executing the test
// binary), so that its peak RSS is the resume's alone plus the Go
// runtime's baseline. Targets: <= 300 ms, <= 64 MiB peak RSS.
// ms/op is the median child's time from Open to the built conversation;
// peak-rss-MiB is the largest VmHWM of any child.
func BenchmarkResume100kCheckpoints(b *testing.B) {
	const n = 100_000
	dir := b.TempDir()
	s, err := Open(dir, "resume", Options{})
	if err != nil {
		b.Fatal(err)
	}
	recs := checkpointedRecords(n)
	for chunk := range slices.Chunk(recs, 5000) {
		if err := s.Append(chunk...); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	fi, err := os.Stat(s.Path())
	if err != nil {
		b.Fatal(err)
	}
	var ds []float64
	peak := 0
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=resume", dirEnv+"="+dir, idEnv+"=resume")
		setPdeathsig(cmd)
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("resume child: %v: %s", err, out)
		}
		var ns, hwm, got int
		if _, err := fmt.Sscan(string(out), &ns, &hwm, &got); err != nil || got != n || hwm <= 0 {
			b.Fatalf("resume child said %q (%v)", out, err)
		}
		ds = append(ds, float64(ns)/1e6)
		peak = max(peak, hwm)
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ds[len(ds)/2], "ms/op")
	b.ReportMetric(float64(peak)/1024, "peak-rss-MiB")
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
}

// TestResumeChildCheckpoints runs the benchmark's child on a small
// checkpointed session, so that the child's protocol is tested with the
// package.
func TestResumeChildCheckpoints(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, "resume")
	if err := s.Append(checkpointedRecords(2000)...); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cmd := childCmd(t, "resume", dir, "resume")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v: %s %s", err, out, cmd.Stderr)
	}
	var ns, hwm, got int
	if _, err := fmt.Sscan(string(out), &ns, &hwm, &got); err != nil || got != 2000 || hwm <= 0 || ns <= 0 {
		t.Fatalf("child said %q (%v)", out, err)
	}
}
