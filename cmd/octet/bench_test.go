package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

func reportMedian(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkPrintSpawnToAnswer measures `octet -p` from spawn to the answer
// on stdout, for a one-step prompt against the loopback fake (target:
// median ≤ 20 ms).
func BenchmarkPrintSpawnToAnswer(b *testing.B) {
	e := newEnv(b)
	var ds []time.Duration
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
	}
	reportMedian(b, ds)
}

// BenchmarkRPCHandshake measures `octet --mode rpc` from spawn to the
// response of a first get_state (target: median ≤ 10 ms).
func BenchmarkRPCHandshake(b *testing.B) {
	e := newEnv(b)
	var ds []time.Duration
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
	}
	reportMedian(b, ds)
}

// BenchmarkFakeRoundTrip measures the loopback fake's answer to a one-step
// prompt from this process (a fresh connection each time, as a new
// process makes): the provider's share of octet -p's time to the answer,
// which the bench summary takes out of it.
func BenchmarkFakeRoundTrip(b *testing.B) {
	e := newEnv(b)
	body := `{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
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
		ds = append(ds, d)
	}
	reportMedian(b, ds)
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
