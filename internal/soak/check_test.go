package soak

import (
	"fmt"
	"strings"
	"testing"
)

// checker returns a driver with one outstanding run (request req-1, run
// run-1, session s) whose batch scripted the answer "the answer", ready
// to be fed frames without a host.
func checker() (*driver, *pending) {
	d := &driver{cfg: Config{Runs: 100, ReportEvery: 100}, rep: &Report{ErrorCodes: map[string]int{}}}
	b := &batch{last: 99, answers: map[string]bool{"the answer": true}, used: map[string]bool{}}
	p := &pending{requestID: "req-1", command: "run", plan: &runPlan{index: 1}, sessionID: "s", openTools: map[string]bool{}, batch: b}
	d.queue = []*pending{p}
	return d, p
}

func runFrame(seq int, typ, data string) string {
	return fmt.Sprintf(`{"protocol_version":1,"request_id":"req-1","seq":%d,"type":%q,"run_id":"run-1","session_id":"s","data":%s}`+"\n", seq, typ, data)
}

var goodRun = []string{
	runFrame(1, "accepted", `{}`),
	runFrame(2, "started", `{}`),
	runFrame(3, "model_delta", `{"step":1,"channel":"text","text":"the "}`),
	runFrame(4, "tool_start", `{"call_id":"c1","tool":"read"}`),
	runFrame(5, "tool_finish", `{"call_id":"c1","tool":"read","ok":true}`),
	runFrame(6, "settled", `{"status":"completed"}`),
	runFrame(7, "final_result", `{"status":"completed","output":"the answer"}`),
}

// TestCheckerAcceptsAGoodRun and TestCheckerCatches show that the frame
// checks pass a well-formed run and fail each kind of broken one.
func TestCheckerAcceptsAGoodRun(t *testing.T) {
	d, _ := checker()
	for _, l := range goodRun {
		d.frame([]byte(l))
	}
	if d.rep.Violations != 0 || d.rep.Ended != 1 || d.rep.Completed != 1 || len(d.queue) != 0 {
		t.Fatalf("report %+v, queue %d", d.rep, len(d.queue))
	}
}

func TestCheckerCatches(t *testing.T) {
	replace := func(i int, l string) []string {
		out := append([]string(nil), goodRun...)
		out[i] = l
		return out
	}
	cases := []struct {
		name   string
		frames []string
		want   string
	}{
		{"seq gap", replace(2, runFrame(4, "model_delta", `{}`)), "seq 4 after 2"},
		{"another request's frame", replace(2, strings.Replace(goodRun[2], `"req-1"`, `"req-2"`, 1)), `request "req-2" while req-1`},
		{"wrong run_id", replace(2, strings.Replace(goodRun[2], `"run-1"`, `"run-9"`, 1)), `run_id "run-9"`},
		{"wrong session_id", replace(2, strings.Replace(goodRun[2], `"session_id":"s"`, `"session_id":"t"`, 1)), `session_id "t"`},
		{"tool never finished", replace(4, runFrame(5, "model_delta", `{}`)), "never finished"},
		{"final without settled", append(append([]string(nil), goodRun[:5]...), runFrame(6, "final_result", `{"status":"completed","output":"the answer"}`)), "SettledBeforeFinal"},
		{"wrong answer", replace(6, runFrame(7, "final_result", `{"status":"completed","output":"the the answer"}`)), "no scripted answer"},
		{"invalid UTF-8", replace(2, runFrame(3, "model_delta", "{\"text\":\"\xff\"}")), "not valid UTF-8"},
		{"not JSON", replace(2, "{\"protocol_version\":1,\n"), "not a JSON event"},
		{"second terminal", append(append([]string(nil), goodRun...), runFrame(8, "final_result", `{"status":"completed","output":"the answer"}`)), "no request outstanding"},
		{"protocol_error as the end", replace(6, runFrame(7, "protocol_error", `{"code":"internal","message":"x"}`)), "protocol_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := checker()
			for _, l := range tc.frames {
				d.frame([]byte(l))
			}
			if d.rep.Violations == 0 || !strings.Contains(strings.Join(d.rep.Problems, "\n"), tc.want) {
				t.Fatalf("problems %q, want one with %q", d.rep.Problems, tc.want)
			}
		})
	}
	t.Run("answer given twice", func(t *testing.T) {
		d, p := checker()
		for _, l := range goodRun {
			d.frame([]byte(l))
		}
		p2 := *p
		p2.frames, p2.events, p2.openTools = nil, nil, map[string]bool{}
		d.queue = []*pending{&p2}
		for _, l := range goodRun {
			d.frame([]byte(l))
		}
		if !strings.Contains(strings.Join(d.rep.Problems, "\n"), "another run already gave") {
			t.Fatalf("problems %q", d.rep.Problems)
		}
	})
}
