package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// spawnHello starts bin, sends hello, reads the answer and waits for exit
// after EOF; it returns the time from start to the hello answer.
func spawnHello(b *testing.B, bin string, home string) time.Duration {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "HOME="+home)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	io.WriteString(stdin, `{"protocol_version":1,"request_id":"probe-1","command":"hello"}`+"\n")
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	d := time.Since(t0)
	if err != nil || !bytes.Contains(line, []byte(`"type":"hello"`)) {
		b.Fatalf("hello: %q %v", line, err)
	}
	stdin.Close()
	cmd.Wait()
	return d
}

func reportMedian(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkSpawnHello measures spawn-to-hello-answer of the built binary
// (target: median ≤ 10 ms). scripts/bench prints it next to
// BenchmarkSpawnTrue as a ratio.
func BenchmarkSpawnHello(b *testing.B) {
	home := b.TempDir()
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		ds = append(ds, spawnHello(b, hostBin, home))
	}
	reportMedian(b, ds)
}

// BenchmarkSpawnTrue is the floor: spawning /bin/true and waiting for it.
func BenchmarkSpawnTrue(b *testing.B) {
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	reportMedian(b, ds)
}

// BenchmarkStdin1GiBNoNewline streams 1 GiB without a newline into the
// host, then a hello, and reports the host's peak RSS (VmHWM; target
// ≤ 32 MiB): an overlong line is discarded without being buffered.
func BenchmarkStdin1GiBNoNewline(b *testing.B) {
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(hostBin)
		cmd.Env = append(os.Environ(), "HOME="+b.TempDir())
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		go func() {
			chunk := bytes.Repeat([]byte("x"), 1<<20)
			for j := 0; j < 1024; j++ {
				if _, err := stdin.Write(chunk); err != nil {
					return
				}
			}
			io.WriteString(stdin, "\n"+`{"protocol_version":1,"request_id":"after","command":"hello"}`+"\n")
		}()
		br := bufio.NewReader(stdout)
		first, _ := br.ReadBytes('\n')
		second, _ := br.ReadBytes('\n')
		if !bytes.Contains(first, []byte("frame_too_large")) || !bytes.Contains(second, []byte(`"type":"hello"`)) {
			b.Fatalf("unexpected answers %q %q", first, second)
		}
		status, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
		if err != nil {
			b.Fatal(err)
		}
		stdin.Close()
		cmd.Wait()
		b.ReportMetric(float64(vmHWMKiB(string(status)))/1024, "peak-rss-MiB")
		b.SetBytes(1 << 30)
	}
}

func vmHWMKiB(status string) int {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return -1
}
