package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/spec"
	"octet.dev/host/wire/client"
)

// The fault-injection suite: each fault is injected into the
// fake provider and run end to end through the binary; the test checks the
// exact recovery events, that the failed attempt's provisional output is
// not the answer, the session afterwards, and the usage flags.

type faultCase struct {
	name   string
	mode   fakeprovider.Mode
	faults []fakeprovider.Fault
	// want is the event types with runs of model_delta collapsed.
	want      string
	status    string
	code      string
	uncertain bool // the session records usage uncertainty
	// delayMin and delayMax bound the first provider_retry's delay_ms
	// when delayMax is set (a Retry-After the host must honour).
	delayMin, delayMax int64
	msgHas             string // the final error message names the reason
}

var answer = fakeprovider.Turn{Text: "final answer", Usage: fakeprovider.Usage{Input: 10, Output: 3}}

const okTail = "model_delta,model_step,settled,final_result"

func TestFaultInjection(t *testing.T) {
	httpDate := func() string { return time.Now().Add(time.Second).UTC().Format(http.TimeFormat) }
	cases := []faultCase{
		{name: "refused then open", faults: []fakeprovider.Fault{fakeprovider.FaultRefuse{For: 300 * time.Millisecond}},
			want: "accepted,started,provider_waiting_for_network," + okTail, status: "completed"},
		{name: "reset after headers", faults: []fakeprovider.Fault{fakeprovider.FaultResetAfterHeaders{}},
			want: "accepted,started,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		{name: "cut mid-stream", faults: []fakeprovider.Fault{fakeprovider.FaultCutMidStream{AfterEvents: 3}},
			want: "accepted,started,model_delta,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		// The request is written and no header ever comes: the idle
		// timeout also bounds that wait, and the call may have been billed.
		{name: "no headers past idle timeout", faults: []fakeprovider.Fault{fakeprovider.FaultNoHeaders{}},
			want: "accepted,started,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		// The server never reads the request: the idle timeout bounds the
		// write (this small request fits the socket buffers, so the wait
		// is for the headers; runtime/internal/provider/chat's
		// TestProviderThatNeverReadsTheRequest blocks the write itself).
		{name: "no read past idle timeout", faults: []fakeprovider.Fault{fakeprovider.FaultNoRead{}},
			want: "accepted,started,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		{name: "stall past idle timeout", faults: []fakeprovider.Fault{fakeprovider.FaultStall{AfterEvents: 3}},
			want: "accepted,started,model_delta,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		{name: "429 retry-after seconds", faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 429, RetryAfter: "1"}},
			want: "accepted,started,provider_retry," + okTail, status: "completed", delayMin: 1000, delayMax: 1000},
		// An HTTP date has whole seconds: one second ahead is at most
		// 1000 ms away when the host reads it.
		{name: "429 retry-after date", faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 429, RetryAfter: httpDate()}},
			want: "accepted,started,provider_retry," + okTail, status: "completed", delayMin: 0, delayMax: 1000},
		{name: "429 retry-after-ms", faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 429, RetryAfterMS: "40"}},
			want: "accepted,started,provider_retry," + okTail, status: "completed", delayMin: 40, delayMax: 40},
		{name: "500", faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 500}},
			want: "accepted,started,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		{name: "502", faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 502}},
			want: "accepted,started,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		{name: "503", faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 503}},
			want: "accepted,started,provider_retry," + okTail, status: "completed"},
		{name: "529", mode: fakeprovider.ModeAnthropic, faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 529}},
			want: "accepted,started,provider_retry," + okTail, status: "completed"},
		{name: "anthropic overloaded event", mode: fakeprovider.ModeAnthropic, faults: []fakeprovider.Fault{fakeprovider.FaultErrorEvent{AfterEvents: 5, Type: "overloaded_error"}},
			want: "accepted,started,model_delta,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		{name: "responses error event", mode: fakeprovider.ModeResponses, faults: []fakeprovider.Fault{fakeprovider.FaultErrorEvent{AfterEvents: 5, Type: "server_error"}},
			want: "accepted,started,model_delta,provider_usage_uncertain,provider_retry," + okTail, status: "completed", uncertain: true},
		{name: "budget exhausted", faults: []fakeprovider.Fault{
			fakeprovider.FaultStatus{Code: 503, RetryAfterMS: "10"}, fakeprovider.FaultStatus{Code: 503, RetryAfterMS: "10"},
			fakeprovider.FaultStatus{Code: 503, RetryAfterMS: "10"}, fakeprovider.FaultStatus{Code: 503, RetryAfterMS: "10"},
			fakeprovider.FaultStatus{Code: 503, RetryAfterMS: "10"}},
			want: "accepted,started,provider_retry,provider_retry,provider_retry,provider_retry,settled,final_result", status: "error", code: "retries_exhausted", msgHas: "503"},
		{name: "quota is not retried", faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 429, Body: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`}},
			want: "accepted,started,settled,final_result", status: "error", code: "quota_exhausted"},
		{name: "401 is not retried", faults: []fakeprovider.Fault{fakeprovider.FaultStatus{Code: 401}},
			want: "accepted,started,settled,final_result", status: "error", code: "auth_failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.mode == "" {
				c.mode = fakeprovider.ModeChat
			}
			e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{answer}})
			e.c.Close()
			e.args = []string{"--provider-idle-timeout-ms", "300"}
			e.c = e.start()
			for _, f := range c.faults {
				e.fake.InjectFault(f)
			}
			req := e.modeReq(c.mode, "run-1", "q")
			str := func(s string) *string { return &s }
			req.SessionID = str("faults")
			evs, final := e.run(e.c, req)
			if got := collapseDeltas(eventTypes(evs)); got != c.want {
				t.Errorf("events\n got %s\nwant %s", got, c.want)
			}
			if final.Status != c.status || (c.code != "" && (final.Error == nil || string(final.Error.Code) != c.code)) {
				t.Fatalf("final %+v error %+v", final, final.Error)
			}
			if c.msgHas != "" && !strings.Contains(final.Error.Message, c.msgHas) {
				t.Errorf("error message %q does not say why (%s)", final.Error.Message, c.msgHas)
			}
			if c.delayMax > 0 {
				for _, ev := range evs {
					if ev.Type != "provider_retry" {
						continue
					}
					var d struct {
						DelayMS int64 `json:"delay_ms"`
					}
					ev.DecodeInto(&d)
					if d.DelayMS < c.delayMin || d.DelayMS > c.delayMax {
						t.Errorf("provider_retry delay_ms %d, want %d..%d (Retry-After)", d.DelayMS, c.delayMin, c.delayMax)
					}
					break
				}
			}
			if c.status == "completed" && final.Output != "final answer" {
				t.Errorf("output %q: the failed attempt's provisional text leaked into the answer", final.Output)
			}
			checkRecovery(t, evs, c.uncertain)
			data, _ := os.ReadFile(*final.SessionFile)
			if got := strings.Contains(string(data), `"type":"usage_uncertainty"`); got != c.uncertain {
				t.Errorf("session usage_uncertainty record: %v, want %v", got, c.uncertain)
			}
			if n := strings.Count(string(data), `"role":"assistant"`); (c.status == "completed") != (n == 1) || n > 1 {
				t.Errorf("session has %d assistant messages: only the committed attempt may be kept", n)
			}
		})
	}
}

// checkRecovery runs the recovery invariants over the run's events and
// checks model_step's usage flag follows the uncertainty.
func checkRecovery(t *testing.T, evs []client.Event, uncertain bool) {
	t.Helper()
	var rs []spec.RecoveryEvent
	for _, ev := range evs {
		var d struct {
			Attempt        int   `json:"attempt"`
			MaxAttempts    *int  `json:"max_attempts"`
			DelayMS        int64 `json:"delay_ms"`
			UsageUncertain bool  `json:"usage_uncertain"`
		}
		ev.DecodeInto(&d)
		rs = append(rs, spec.RecoveryEvent{Type: ev.Type, Attempt: d.Attempt, MaxAttempts: d.MaxAttempts, DelayMS: d.DelayMS, UsageUncertain: d.UsageUncertain})
		if ev.Type == "model_step" && d.UsageUncertain != uncertain {
			t.Errorf("model_step usage_uncertain %v, want %v", d.UsageUncertain, uncertain)
		}
	}
	if err := spec.Recovery(rs); err != nil {
		t.Error(err)
	}
}

// TestUncertaintyStickyAcrossRuns: a later run on an uncertain session
// emits provider_usage_uncertain again, in a new host process too.
func TestUncertaintyStickyAcrossRuns(t *testing.T) {
	e := newE2E(t, fakeprovider.Script{Turns: []fakeprovider.Turn{answer, answer}})
	e.fake.InjectFault(fakeprovider.FaultStatus{Code: 500})
	str := func(s string) *string { return &s }
	req := e.runReq("run-1", "q")
	req.SessionID = str("sticky")
	e.run(e.c, req)
	e.c.Close()
	c2 := e.start()
	req = e.runReq("run-2", "q2")
	req.SessionID = str("sticky")
	evs, final := e.run(c2, req)
	if final.Status != "completed" || !strings.HasPrefix(eventTypes(evs), "accepted,started,provider_usage_uncertain,") {
		t.Fatalf("resumed run: %s %+v", eventTypes(evs), final)
	}
	checkRecovery(t, evs, true)
	_ = protocol.StatusCompleted
}

// TestDNSFailureWaitsForNetwork runs the host in a private mount namespace
// whose /etc/resolv.conf names a resolver on 127.0.0.1 where nothing
// listens: every lookup fails, with no traffic off loopback. The run waits
// for the network (a pre-send outage), never retries, and SIGTERM ends the
// wait with exit 143. It needs root for the mount namespace.
func TestDNSFailureWaitsForNetwork(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private mount namespace")
	}
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	os.WriteFile(resolv, []byte("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"), 0o644)
	script := `mount --bind "$1" /etc/resolv.conf && exec "$2"`
	if err := exec.Command("unshare", "-m", "sh", "-c", "true").Run(); err != nil {
		t.Skipf("unshare -m is not available here: %v", err)
	}
	h := startEnv(t, nil, "unshare", "-m", "sh", "-c", script, "sh", resolv, hostBin)
	line := fmt.Sprintf(`{"protocol_version":1,"request_id":"dns","command":"run","run_id":"run-1","workspace":%q,"model":"m","prompt":"p","provider":"x","base_url":"http://octet-dns-test.example/v1","tools":[]}`, t.TempDir())
	h.send(t, line)
	var types []string
	for len(types) < 4 {
		ev := h.next(t)
		types = append(types, ev.Type)
		if ev.Type == "provider_waiting_for_network" {
			if !strings.Contains(string(ev.Data), "lookup octet-dns-test.example") || strings.Contains(string(ev.Data), "max_attempts") {
				t.Fatalf("wait event %s", ev.Data)
			}
		}
		if ev.Type == "final_result" || ev.Type == "provider_retry" {
			t.Fatalf("a DNS failure must wait for the network: %v", types)
		}
	}
	if strings.Join(types, ",") != "accepted,started,provider_waiting_for_network,provider_waiting_for_network" {
		t.Fatalf("events %v", types)
	}
	h.cmd.Process.Signal(syscall.SIGTERM)
	if code := h.wait(t); code != 143 {
		t.Errorf("exit %d after SIGTERM during a network wait, want 143", code)
	}
}
