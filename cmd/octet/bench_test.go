package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"octet.dev/host/internal/testbin"
	"octet.dev/host/runtime/fakeprovider"
)

// hostYardstick returns the octet-host binary, whose spawn-to-hello the
// start-up benchmarks take in turn with their own figure (built once per
// go test run, testbin).
func hostYardstick(b *testing.B) string {
	bin, err := testbin.Build(testbin.Host)
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// BenchmarkPrintSpawnToAnswer measures `octet -p` from spawn to the answer
// on stdout, for a one-step prompt against the loopback fake (target:
// median ≤ 20 ms). Its yardsticks are taken in turn with it, in the same
// loop: octet-host's spawn to hello (hello-ms) and the fake's answer to the
// same prompt from this process (fake-ms, the provider's share). The
// target is median-ms ≤ 1.5 × (hello-ms + fake-ms); scripts/bench prints
// the ratio. A third yardstick, also in turn, is octet-host doing the same
// run from its spawn to the run's final_result (host-run-ms): the host's
// own cost of a run (its session, its syncs, its provider call), so that
// the summary can say how the CLI compares with the host on the same work.
func BenchmarkPrintSpawnToAnswer(b *testing.B) {
	e := newEnv(b)
	host, home := hostYardstick(b), b.TempDir()
	var ds, hello, fake, hostRun []time.Duration
	// The host's run is the CLI's: the same route, workspace, prompt and
	// default tools, resuming a session of its own that grows as the CLI's.
	runReq := fmt.Sprintf(`{"protocol_version":1,"request_id":"bench","command":"run","workspace":%q,"model":"fake-model","prompt":"x","provider":"fake","base_url":%q,"session_id":"bench"`,
		e.ws, e.fake.BaseURL(fakeprovider.ModeChat))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.fake.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{done}})
		cmd := e.command(e.args("-p", "x", "--session", "bench")...)
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		answer, err := bufio.NewReader(stdout).ReadString('\n')
		d := time.Since(t0)
		if err != nil || answer != "The answer is 42.\n" {
			b.Fatalf("answer %q, %v", answer, err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, d)
		h, err := testbin.SpawnHello(host, home)
		if err != nil {
			b.Fatal(err)
		}
		hello = append(hello, h)
		fake = append(fake, fakeRoundTrip(b, e))
		e.fake.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{done}})
		r, err := testbin.SpawnRun(host, home, runReq+fmt.Sprintf(`,"run_id":"run-%d"}`, i))
		if err != nil {
			b.Fatal(err)
		}
		hostRun = append(hostRun, r)
	}
	b.ReportMetric(testbin.MedianMS(ds), "median-ms")
	b.ReportMetric(testbin.MedianMS(hello), "hello-ms")
	b.ReportMetric(testbin.MedianMS(fake), "fake-ms")
	b.ReportMetric(testbin.MedianMS(hostRun), "host-run-ms")
}

// BenchmarkRPCHandshake measures `octet --mode rpc` from spawn to the
// response of a first get_state (target: median ≤ 10 ms), and in turn with
// it octet-host's spawn to hello (hello-ms; target: median-ms ≤ 1.2 ×
// hello-ms).
func BenchmarkRPCHandshake(b *testing.B) {
	e := newEnv(b)
	host, home := hostYardstick(b), b.TempDir()
	var ds, hello []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := e.command(e.args("--mode", "rpc")...)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		io.WriteString(stdin, `{"type":"get_state"}`+"\n")
		resp, err := bufio.NewReader(stdout).ReadString('\n')
		d := time.Since(t0)
		if err != nil || !strings.Contains(resp, `"command":"get_state","success":true`) {
			b.Fatalf("get_state: %q %v", resp, err)
		}
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, d)
		h, err := testbin.SpawnHello(host, home)
		if err != nil {
			b.Fatal(err)
		}
		hello = append(hello, h)
	}
	b.ReportMetric(testbin.MedianMS(ds), "median-ms")
	b.ReportMetric(testbin.MedianMS(hello), "hello-ms")
}

// BenchmarkFakeRoundTrip times fakeRoundTrip back to back: the fake's
// share as the figures before BenchmarkPrintSpawnToAnswer's hello-ms and
// fake-ms took it (scripts/bench prints the ratio both ways).
func BenchmarkFakeRoundTrip(b *testing.B) {
	e := newEnv(b)
	ds := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		ds = append(ds, fakeRoundTrip(b, e))
	}
	b.ReportMetric(testbin.MedianMS(ds), "median-ms")
}

// fakeRoundTrip times the loopback fake's answer to a one-step prompt from
// this process, on a fresh connection as a new process makes.
func fakeRoundTrip(b *testing.B, e *env) time.Duration {
	const body = `{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
	e.fake.SetScript(fakeprovider.Script{Turns: []fakeprovider.Turn{done}})
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	t0 := time.Now()
	resp, err := client.Post(e.fake.BaseURL(fakeprovider.ModeChat)+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	all, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(all, []byte("42")) {
		b.Fatalf("status %d, %v: %s", resp.StatusCode, err, all)
	}
	return d
}

// BenchmarkRPCDelta is the per-delta cost of RPC mode's encoding.
func BenchmarkRPCDelta(b *testing.B) {
	ev := deltaEvent("a few words of streamed text ")
	var buf []byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf, _ = appendRPCEvent(buf[:0], "01a23239d65b-37c0803ff8cc7693", ev)
	}
	if !bytes.HasSuffix(buf, []byte("}\n")) {
		b.Fatal(string(buf))
	}
}
