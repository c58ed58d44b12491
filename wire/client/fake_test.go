package client

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
)

// The test binary doubles as a fake host: TestMain runs runFake when
// fakeEnv names a scenario. Each scenario answers hello validly (unless it
// is about hello) and then answers models and run requests with crafted
// lines.
const (
	fakeEnv  = "OCTET_CLIENT_FAKE"
	gateEnv  = "OCTET_CLIENT_FAKE_GATE" // a file the slow run waits for
	fakeSDK  = "9.9.9-fake"
	floodLen = 1 << 20
)

const fakeHelloData = `{"sdk_version":"` + fakeSDK + `","protocol_version":1,"max_frame_bytes":1048576,"max_concurrent_runs":1,` +
	`"commands":["hello","models","run","shutdown"],"features":{"streaming":true,"tools":false,"process_group_abort":true,"in_band_abort":false},"extra":"tolerated"}`

type fakeRequest struct {
	ID        string  `json:"request_id"`
	Command   string  `json:"command"`
	RunID     string  `json:"run_id"`
	SessionID *string `json:"session_id"`
}

// fakeHost is the state of a fake host process.
type fakeHost struct {
	scenario string
	models   int // models requests seen
}

func (f *fakeHost) out(format string, args ...any) {
	os.Stdout.WriteString(fmt.Sprintf(format, args...) + "\n")
}

// event writes one event line for req with the given seq, type and data.
func (f *fakeHost) event(req fakeRequest, seq int, typ, data string) {
	f.out(`{"protocol_version":1,"request_id":%q,"seq":%d,"type":%q,"data":%s}`, req.ID, seq, typ, data)
}

// runEvent writes one run event, echoing run_id and session_id.
func (f *fakeHost) runEvent(req fakeRequest, seq int, typ, data string) {
	sid := ""
	if req.SessionID != nil {
		sid = fmt.Sprintf(`,"session_id":%q`, *req.SessionID)
	}
	f.out(`{"protocol_version":1,"request_id":%q,"seq":%d,"type":%q,"run_id":%q%s,"data":%s}`, req.ID, seq, typ, req.RunID, sid, data)
}

const finalCompleted = `{"status":"completed","output":"Hello, world.","error":null,"filesChanged":[],"toolCalls":0,"steps":1,"sessionFile":null}`

func runFake(scenario string) int {
	f := &fakeHost{scenario: scenario}
	switch scenario {
	case "sleep":
		time.Sleep(time.Minute)
		return 0
	case "stderr-flood":
		chunk := strings.Repeat("x", 1023) + "\n"
		for n := 0; n < floodLen; n += len(chunk) {
			os.Stderr.WriteString(chunk)
		}
		os.Stderr.WriteString("END-OF-STDERR\n")
	case "ignore-eof", "hang-on-models":
		// A child in the same process group, holding stderr: the group
		// kill must take it too.
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), fakeEnv+"=sleep")
		child.Stderr = os.Stderr
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake: starting child:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "child-pid=%d\n", child.Process.Pid)
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 4<<20)
	for in.Scan() {
		var req fakeRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "fake: bad request:", err)
			return 1
		}
		if f.answer(req) {
			return 0
		}
	}
	if scenario == "ignore-eof" {
		time.Sleep(time.Minute)
	}
	return 0
}

// answer answers one request; it reports whether the fake must exit.
func (f *fakeHost) answer(req fakeRequest) bool {
	switch req.Command {
	case "hello":
		switch f.scenario {
		case "hello-mismatch":
			f.out(`{"protocol_version":2,"request_id":%q,"seq":1,"type":"hello","data":%s}`, req.ID, fakeHelloData)
		case "hello-inband":
			f.event(req, 1, "hello", strings.Replace(fakeHelloData, `"in_band_abort":false`, `"in_band_abort":true`, 1))
		case "hello-frame":
			f.event(req, 1, "hello", strings.Replace(fakeHelloData, `1048576`, `65536`, 1))
		case "hello-commands":
			f.event(req, 1, "hello", strings.Replace(fakeHelloData, `"run",`, ``, 1))
		default:
			f.event(req, 1, "hello", fakeHelloData)
		}
		if f.scenario == "early-answer" {
			f.earlyAnswer()
		}
	case "shutdown":
		f.event(req, 1, "shutdown", `{}`)
		return true
	case "models":
		f.models++
		f.answerModels(req)
	case "run":
		f.answerRun(req)
	}
	return false
}

const modelsData = `{"models":[{"id":"m1","provider":"fake","name":"Fake One","provider_mode":"openai-compatible","context_window_tokens":1000,"max_output_tokens":100,"input_modalities":["text"],"vision":false,"audio":false,"supports_reasoning":false,"new_field":1}]}`

func (f *fakeHost) answerModels(req fakeRequest) {
	switch f.scenario {
	case "models-mismatch":
		f.out(`{"protocol_version":"1","request_id":%q,"seq":1,"type":"models","data":%s}`, req.ID, modelsData)
	case "unknown-id":
		f.event(fakeRequest{ID: "someone-else"}, 1, "models", modelsData)
	case "null-id":
		f.out(`{"protocol_version":1,"request_id":null,"seq":1,"type":"models","data":%s}`, modelsData)
	case "null-id-protocol-error":
		f.out(`{"protocol_version":1,"request_id":null,"seq":1,"type":"protocol_error","data":{"code":"frame_too_large","message":"discarded"}}`)
	case "seq-start":
		f.event(req, 2, "models", modelsData)
	case "second-terminal":
		f.event(req, 1, "models", modelsData)
		f.event(req, 2, "models", modelsData)
	case "wrong-terminal":
		f.event(req, 1, "final_result", finalCompleted)
	case "oversized":
		f.event(req, 1, "models", `{"models":[],"pad":"`+strings.Repeat("y", 3<<19)+`"}`)
	case "non-json":
		f.out("this is not JSON")
	case "not-object":
		f.out(`[1,2,3]`)
	case "duplicate-member":
		f.out(`{"protocol_version":1,"request_id":%q,"seq":1,"seq":1,"type":"models","data":%s}`, req.ID, modelsData)
	case "bad-models-data":
		f.event(req, 1, "models", `{"models":"many"}`)
	case "protocol-error":
		if f.models == 1 {
			f.event(req, 1, "protocol_error", `{"code":"invalid_field","message":"offline must be a boolean"}`)
			return
		}
		f.event(req, 1, "models", modelsData)
	case "exit-on-models":
		os.Stderr.WriteString("fatal: boom\n")
		os.Exit(3)
	case "hang-on-models":
		time.Sleep(time.Minute)
	default:
		f.event(req, 1, "models", modelsData)
	}
}

func (f *fakeHost) answerRun(req fakeRequest) {
	switch f.scenario {
	case "seq-gap":
		f.runEvent(req, 1, "accepted", `{}`)
		f.runEvent(req, 3, "started", `{}`)
	case "run-id":
		req.RunID = "another-run"
		f.runEvent(req, 1, "final_result", finalCompleted)
	case "run-id-missing":
		f.event(req, 1, "started", `{}`)
	case "session-id":
		other := "another-session"
		req.SessionID = &other
		f.runEvent(req, 1, "final_result", finalCompleted)
	case "bad-status":
		f.runEvent(req, 1, "final_result", strings.Replace(finalCompleted, "completed", "done", 1))
	case "run-rejected":
		// A protocol_error for a run carries no run_id when the host
		// rejected the line.
		f.event(req, 1, "protocol_error", `{"code":"unknown_field","message":"unknown member \"colour\""}`)
	case "slow-run":
		f.runEvent(req, 1, "accepted", `{}`)
		waitGate()
		f.runEvent(req, 2, "final_result", finalCompleted)
	case "many-events":
		n := 2000
		for i := 1; i <= n; i++ {
			f.runEvent(req, i, "model_delta", `{"step":1,"channel":"text","text":"`+strconv.Itoa(i)+` "}`)
		}
		f.runEvent(req, n+1, "final_result", finalCompleted)
	default:
		f.runEvent(req, 1, "accepted", `{"model":{"id":"m1"},"tools":[]}`)
		f.runEvent(req, 2, "started", `{}`)
		f.runEvent(req, 3, "model_delta", `{"step":1,"channel":"reasoning","text":"thinking"}`)
		f.runEvent(req, 4, "model_delta", `{"step":1,"channel":"text","text":"Hello, "}`)
		f.runEvent(req, 5, "some_future_event", `{"anything":[1,2]}`)
		f.runEvent(req, 6, "model_delta", `{"step":1,"channel":"text","text":"world."}`)
		f.runEvent(req, 7, "settled", `{"status":"completed"}`)
		f.runEvent(req, 8, "final_result", finalCompleted)
	}
}

// waitGate waits until the file gateEnv names exists (at once without one).
func waitGate() {
	gate := os.Getenv(gateEnv)
	for gate != "" {
		if _, err := os.Stat(gate); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// earlyAnswer answers the request after hello (req-2) with a
// protocol_error as soon as the first byte of its line arrives, leaves the
// rest of the line unread until the gate opens, then skips it.
func (f *fakeHost) earlyAnswer() {
	b := make([]byte, 1)
	if _, err := os.Stdin.Read(b); err != nil {
		return
	}
	f.event(fakeRequest{ID: idPrefix + "2"}, 1, "protocol_error", `{"code":"invalid_field","message":"answered early"}`)
	waitGate()
	for b[0] != '\n' {
		if _, err := os.Stdin.Read(b); err != nil {
			return
		}
	}
}
