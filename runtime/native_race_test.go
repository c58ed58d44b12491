package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
)

// raceServer is a Responses WebSocket server that takes steers at any
// moment: while a response streams it accepts them and ends the response
// steered, followed by a successor; a steer for a response that is no
// longer active fails (response.steer.failed without an id, with the
// input). Its responses stream slowly, so steers race every point of the
// stream: its start, its deltas, its end.
type raceServer struct {
	srv        *httptest.Server
	deltas     int
	delay      time.Duration
	successors int // at most this many successors in all
	calls      int // the first this many responses to a response.create end with a tool call

	mu     sync.Mutex
	steers []string // the input of every response.steer received
	made   int      // successors created
	errs   []string // what the client sent against the protocol
}

func (rs *raceServer) fail(format string, args ...any) {
	rs.mu.Lock()
	rs.errs = append(rs.errs, fmt.Sprintf(format, args...))
	rs.mu.Unlock()
}

func newRaceServer(t *testing.T, deltas int, delay time.Duration) *raceServer {
	rs := &raceServer{deltas: deltas, delay: delay, successors: 6}
	rs.srv = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.srv.Close)
	return rs
}

func (rs *raceServer) serve(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	ctx := r.Context()
	msgs := make(chan map[string]any, 256)
	go func() {
		defer close(msgs)
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var body map[string]any
			if json.Unmarshal(data, &body) != nil {
				return
			}
			msgs <- body
		}
	}()
	seq, n := 0, 0
	send := func(fields map[string]any) bool {
		fields["sequence_number"] = seq
		seq++
		data, _ := json.Marshal(fields)
		return conn.Write(ctx, websocket.MessageText, data) == nil
	}
	active := ""
	var accepted []string
	pendingFor, pendingInputs := "", map[string]string{} // the response whose steers are pending, their inputs by steer id
	inputs := map[string]string{}                        // accepted inputs by steer id
	steer := func(body map[string]any) bool {
		in, _ := body["input"].(string)
		rs.mu.Lock()
		rs.steers = append(rs.steers, in)
		k := len(rs.steers)
		can := active != "" && body["previous_response_id"] == active && rs.made+len(accepted) < rs.successors
		rs.mu.Unlock()
		if can {
			id := fmt.Sprintf("steer_%d", k)
			accepted = append(accepted, id)
			inputs[id] = in
			return send(map[string]any{"type": "response.steer.accepted", "steer": map[string]any{"id": id, "previous_response_id": active}})
		}
		return send(map[string]any{"type": "response.steer.failed",
			"steer": map[string]any{"previous_response_id": body["previous_response_id"], "input": in},
			"error": map[string]any{"code": "steer_rejected", "message": "not active"}})
	}
	drain := func() bool {
		for {
			select {
			case body, ok := <-msgs:
				if !ok {
					return false
				}
				if body["type"] != "response.steer" || !steer(body) {
					return false
				}
			default:
				return true
			}
		}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
	creates := 0
	var respond func(call bool) bool
	respond = func(call bool) bool {
		n++
		id := fmt.Sprintf("resp_%d_%d", n, rand.IntN(1e6))
		msg := "msg_" + id
		active = id
		if !send(map[string]any{"type": "response.created", "response": map[string]any{"id": id, "object": "response", "status": "in_progress", "output": []any{}}}) ||
			!send(map[string]any{"type": "response.output_item.added", "output_index": 0,
				"item": map[string]any{"id": msg, "type": "message", "status": "in_progress", "content": []any{}, "role": "assistant"}}) {
			return false
		}
		var text strings.Builder
		for i := range rs.deltas {
			if !drain() {
				return false
			}
			piece := fmt.Sprintf("w%d ", i)
			text.WriteString(piece)
			if !send(map[string]any{"type": "response.output_text.delta", "item_id": msg, "output_index": 0, "content_index": 0, "delta": piece}) {
				return false
			}
			time.Sleep(rs.delay)
		}
		if !drain() {
			return false
		}
		item := map[string]any{"id": msg, "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text.String(), "annotations": []any{}}}}
		if !send(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item}) {
			return false
		}
		output := []any{item}
		if call {
			fc := map[string]any{"id": "fc_" + id, "type": "function_call", "status": "completed", "arguments": `{"path":"notes.txt"}`,
				"call_id": "call_" + id, "name": "read"}
			if !send(map[string]any{"type": "response.output_item.added", "output_index": 1, "item": fc}) ||
				!send(map[string]any{"type": "response.output_item.done", "output_index": 1, "item": fc}) {
				return false
			}
			output = append(output, fc)
			if !drain() {
				return false
			}
			active = ""
			if !send(map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "object": "response", "status": "completed",
				"output": output, "usage": usage}}) {
				return false
			}
			if len(accepted) > 0 {
				pendingFor = id
			}
			for _, sid := range accepted {
				pendingInputs[sid] = inputs[sid]
				if !send(map[string]any{"type": "response.steer.pending", "reason": "waiting_for_required_input",
					"steer": map[string]any{"id": sid, "previous_response_id": id}}) {
					return false
				}
			}
			if len(accepted) > 0 {
				rs.mu.Lock()
				rs.made++
				rs.mu.Unlock()
			}
			accepted = nil
			return true
		}
		active = ""
		if len(accepted) > 0 {
			accepted = nil
			rs.mu.Lock()
			rs.made++
			rs.mu.Unlock()
			if !send(map[string]any{"type": "response.incomplete", "response": map[string]any{"id": id, "object": "response", "status": "incomplete",
				"incomplete_details": map[string]any{"reason": "steered"}, "output": []any{item}, "usage": usage}}) {
				return false
			}
			return respond(false) // the successor
		}
		return send(map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "object": "response", "status": "completed",
			"output": []any{item}, "usage": usage}})
	}
	for body := range msgs {
		switch body["type"] {
		case "response.create":
			if pendingFor != "" {
				data, _ := json.Marshal(body["input"])
				if body["previous_response_id"] != pendingFor {
					rs.fail("the response.create after pending continues %v, not %s", body["previous_response_id"], pendingFor)
				}
				for _, in := range pendingInputs {
					if strings.Contains(string(data), `"`+in+`"`) {
						rs.fail("the response.create after pending resends %s", in)
					}
				}
				pendingFor, pendingInputs = "", map[string]string{}
			}
			creates++
			if !respond(creates <= rs.calls) {
				return
			}
		case "response.steer":
			if !steer(body) {
				return
			}
		default:
			return
		}
	}
}

// Steers from two goroutines at random moments of a slowly streamed
// answer: whatever the interleaving, every input is delivered exactly once
// (native or queued) or reported undelivered, never lost nor delivered
// twice; the session holds each delivered input once; the run completes.
func TestNativeSteeringRacesStream(t *testing.T) {
	for iter := range 24 {
		cancelAt := time.Duration(0)
		if iter >= 12 {
			cancelAt = time.Duration(rand.IntN(40000)) * time.Microsecond
		}
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			rs := newRaceServer(t, 12, time.Millisecond)
			rs.successors = iter % 4 // 0: every steer fails
			rs.calls = iter % 3      // responses that stop for a tool call (pending)
			home, ws := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".octet"), 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := `{"providers":{"lab":{"base_url":"` + rs.srv.URL + `/v1","provider_mode":"openai-responses","transport":"websocket",` +
				`"models":[{"id":"lab-model","context_window_tokens":32768,"max_output_tokens":4096,"native_steering":true}]}}}`
			if err := os.WriteFile(filepath.Join(home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			agent, err := runtime.New(runtime.Options{Home: home, Getenv: func(string) string { return "" }, IdleTimeout: 3 * time.Second,
				Sleep: func(context.Context, time.Duration) error { return nil }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if cancelAt > 0 {
				time.AfterFunc(cancelAt, cancel)
			}
			if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello"), 0o600); err != nil {
				t.Fatal(err)
			}
			rc, err := agent.Run(ctx, runtime.RunRequest{RunID: "run-1", Workspace: ws, Model: "lab-model", Prompt: "go",
				Tools: []string{"read"}, SessionDir: filepath.Join(home, "sessions"), SessionID: "raced"})
			if err != nil {
				t.Fatal(err)
			}
			inputs := []string{}
			var wg sync.WaitGroup
			start := make(chan struct{})
			var steerErrs sync.Map
			for g := range 2 {
				for i := range 4 {
					inputs = append(inputs, fmt.Sprintf("in-%d-%d", g, i))
				}
				wg.Go(func() {
					<-start
					for i := range 4 {
						time.Sleep(time.Duration(rand.IntN(12000)) * time.Microsecond)
						text := fmt.Sprintf("in-%d-%d", g, i)
						if err := rc.Steer(text); err != nil {
							steerErrs.Store(text, err)
						}
					}
				})
			}
			var evs []runtime.Event
			started := false
			for ev := range rc.Events() {
				evs = append(evs, ev)
				if _, ok := ev.Data.(*protocol.ModelDelta); ok && !started {
					started = true
					close(start)
				}
			}
			if !started {
				close(start)
			}
			wg.Wait()
			res := rc.Wait()
			if cancelAt > 0 && res.Status == protocol.StatusError && res.Error != nil && res.Error.Code == protocol.CodeCanceled {
				// fine
			} else if res.Status != protocol.StatusCompleted {
				data, _ := os.ReadFile(*res.SessionFile)
				for line := range strings.Lines(string(data)) {
					if strings.Contains(line, "native_steering") || strings.Contains(line, `"message"`) {
						t.Log(strings.TrimSpace(line))
					}
				}
				for _, ev := range evs {
					t.Logf("event %s %+v", ev.Type, ev.Data)
				}
				t.Fatalf("result %+v %+v", res, res.Error)
			}
			rs.mu.Lock()
			for _, e := range rs.errs {
				t.Error(e)
			}
			rs.mu.Unlock()
			finals := 0
			got := map[string]int{}
			modes := map[string]int{}
			defer func() { t.Logf("modes %v undelivered %d steers sent %d", modes, len(rc.Undelivered()), len(rs.steers)) }()
			for _, ev := range evs {
				switch d := ev.Data.(type) {
				case *protocol.SteeringDelivered:
					got[d.Text]++
					modes[d.Mode]++
				case *protocol.FinalResult:
					finals++
				}
			}
			for _, u := range rc.Undelivered() {
				got[u.Text]++
			}
			steerErrs.Range(func(k, v any) bool {
				if strings.Contains(v.(error).Error(), "ended") {
					got[k.(string)]++ // refused: the run had ended
				} else {
					t.Errorf("Steer(%v): %v", k, v)
				}
				return true
			})
			if finals != 1 {
				t.Errorf("%d final_result events", finals)
			}
			for _, in := range inputs {
				if got[in] != 1 && (cancelAt == 0 || got[in] > 1) {
					t.Errorf("input %s delivered or reported %d times (all: %v)", in, got[in], got)
				}
			}
			data, err := os.ReadFile(*res.SessionFile)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range inputs {
				if c := strings.Count(string(data), `"text":"`+in+`"`); c > 1 {
					t.Errorf("input %s in the session %d times", in, c)
				}
			}
		})
	}
}
