package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// BenchmarkBinary20kDeltas streams a 20,000-delta answer end to end through
// the built binary and reports the host process's CPU time (user+system)
// per run; the stream is served pre-rendered from loopback.
func BenchmarkBinary20kDeltas(b *testing.B) {
	const n = 20000
	var body strings.Builder
	for i := 0; i < n; i++ {
		body.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}` + "\n\n")
	}
	body.WriteString(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	payload := []byte(body.String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(payload)
	}))
	defer srv.Close()
	ws := b.TempDir()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(hostBin)
		cmd.Env = append(os.Environ(), "HOME="+b.TempDir())
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(stdin, `{"protocol_version":1,"request_id":"r","command":"run","run_id":"r","workspace":%q,"model":"m","prompt":"go","provider":"bench","base_url":%q,"tools":[]}`+"\n", ws, srv.URL+"/v1")
		br := bufio.NewReaderSize(stdout, 1<<20)
		deltas := 0
		for {
			l, err := br.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if bytes.Contains(l[:min(len(l), 100)], []byte(`"model_delta"`)) {
				deltas++
			}
			if bytes.Contains(l[:min(len(l), 100)], []byte(`"final_result"`)) {
				break
			}
		}
		stdin.Close()
		cmd.Wait()
		if deltas != n {
			b.Fatalf("%d deltas", deltas)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "host-cpu-ms")
}
