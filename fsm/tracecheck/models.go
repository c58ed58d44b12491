package tracecheck

import (
	"encoding/json"
	"fmt"
)

// model is how one machine's trace maps onto its spec: the spec's name,
// the spec action of a logged step, and the abstraction of a spec state
// (as the graph file holds it) and of a logged state (the machine's
// state as JSON). Both abstractions return the same kind of key.
type model struct {
	spec      string
	action    func(trigger, to string) (string, bool)
	absSpec   func(s specState) string
	absTraced func(raw []byte) (key, phase string, err error)
}

// specState is one state of a graph file: the GraphView record.
type specState map[string]any

func (s specState) str(k string) string {
	if v, ok := s[k].(string); ok {
		return v
	}
	return fmt.Sprint(s[k])
}

func (s specState) num(k string) int64 {
	if v, ok := s[k].(float64); ok {
		return int64(v)
	}
	return -1 // a string: the spec's None
}

func (s specState) flag(k string) bool { v, _ := s[k].(bool); return v }

// some cuts a count down to zero or some: the abstraction of every
// counter, which the bounded models cap and real runs do not.
func some(n int64) int {
	if n > 0 {
		return 1
	}
	return 0
}

// none is the specs' None, the Go zero string.
func none(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// recoveryCode is the abstraction of a recovery machine's failure code:
// the codes the machine decides itself (recovery's Code constants) are
// kept; the code of a fatal failure (the provider's, classified) or of an
// abort (the driver's) is "other", which the step's trigger tells apart.
func recoveryCode(c string) string {
	switch c {
	case "none", "canceled", "network_wait_exceeded", "retries_exhausted", "retry_after_too_long":
		return c
	}
	return "other"
}

// table maps trigger names to action names, whatever the step's target.
func table(m map[string]string) func(string, string) (string, bool) {
	return func(tr, _ string) (string, bool) { a, ok := m[tr]; return a, ok }
}

// decode reads a logged state into v and returns its phase.
func decode[T any](raw []byte, phase func(T) string) (T, string, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, "", fmt.Errorf("state %s: %v", raw, err)
	}
	return v, phase(v), nil
}

// models are the machines by the name they log (fsm.Transition.Machine).
var models = map[string]model{
	"session": {
		spec: "Session",
		action: table(map[string]string{"request": "Request", "shutdown": "Shutdown", "malformed": "Malformed",
			"event": "Event", "terminal": "Terminal", "eof": "EOF", "write_failed": "WriteFailed"}),
		// A request in hand or not, events written for it or not, other
		// request IDs used or not.
		absSpec: func(s specState) string {
			cur := s.str("current")
			others := 0
			used, _ := s["used"].([]any)
			for _, id := range used {
				if id != cur {
					others = 1
				}
			}
			return fmt.Sprintf("%s current=%v seq=%d others=%d", s.str("phase"), cur != "none", some(s.num("seq")), others)
		},
		absTraced: func(raw []byte) (string, string, error) {
			v, p, err := decode(raw, func(v struct {
				Phase, Current string
				Seq, Used      int64
			}) string {
				return v.Phase
			})
			others := v.Used
			if v.Current != "" {
				others-- // the request in hand is used
			}
			return fmt.Sprintf("%s current=%v seq=%d others=%d", p, v.Current != "", some(v.Seq), some(others)), p, err
		},
	},
	"run": {
		spec: "RunLifecycle",
		action: table(map[string]string{"accept": "Accept", "reject": "Reject", "start": "Start", "stream": "Stream",
			"settle": "Settle", "finalize": "Finalize"}),
		absSpec: func(s specState) string { return s.str("phase") + " status=" + s.str("status") },
		absTraced: func(raw []byte) (string, string, error) {
			v, p, err := decode(raw, func(v struct{ Phase, Status string }) string { return v.Phase })
			return p + " status=" + none(v.Status), p, err
		},
	},
	"steering": {
		spec: "Steering",
		action: table(map[string]string{"steer": "Steer", "follow_up": "FollowUp", "after_tool": "AfterTool",
			"after_turn": "AfterTurn", "close": "Close"}),
		absSpec: func(s specState) string {
			return fmt.Sprintf("%s steering=%d followUps=%d", s.str("phase"), some(s.num("steering")), some(s.num("followUps")))
		},
		absTraced: func(raw []byte) (string, string, error) {
			v, p, err := decode(raw, func(v struct {
				Phase               string
				Steering, FollowUps int64
			}) string {
				return v.Phase
			})
			return fmt.Sprintf("%s steering=%d followUps=%d", p, some(v.Steering), some(v.FollowUps)), p, err
		},
	},
	"native_steering": {
		spec: "NativeSteering",
		action: table(map[string]string{"record": "Record", "dispatch": "Dispatch", "accepted": "Accepted",
			"pending": "Pending", "send_create": "SendCreate", "successor": "Successor", "usage": "Usage",
			"failed": "Failed", "lost": "Lost", "later_run": "LaterRun"}),
		absSpec: func(s specState) string { return s.str("phase") },
		absTraced: func(raw []byte) (string, string, error) {
			_, p, err := decode(raw, func(v struct{ Phase string }) string { return v.Phase })
			return p, p, err
		},
	},
	"recovery": {
		spec: "Recovery",
		action: table(map[string]string{"start": "Start", "attempt_failed": "AttemptFailed",
			"attempt_succeeded": "AttemptSucceeded", "timer_fired": "TimerFired", "cancel": "Cancel", "abort": "Abort"}),
		// The model's clock readings (the outage's start, the floor) and
		// its max network wait are ticks of a four-tick clock: only
		// whether there was an outage is kept. Its faults stand for kinds
		// of failure, so the codes a failure or an abort carries are one
		// (recoveryCode).
		absSpec: func(s specState) string {
			return fmt.Sprintf("%s code=%s uncertain=%v retries=%d waits=%d outage=%v", s.str("phase"), recoveryCode(s.str("code")),
				s.flag("uncertain"), some(s.num("retries")), some(s.num("waits")), s.str("outage") != "none")
		},
		absTraced: func(raw []byte) (string, string, error) {
			v, p, err := decode(raw, func(v struct {
				Phase, Code           string
				Retries, NetworkWaits int64
				Outage, Uncertain     bool
			}) string {
				return v.Phase
			})
			return fmt.Sprintf("%s code=%s uncertain=%v retries=%d waits=%d outage=%v", p, recoveryCode(none(v.Code)),
				v.Uncertain, some(v.Retries), some(v.NetworkWaits), v.Outage), p, err
		},
	},
	"compaction": {
		spec: "Compaction",
		// The threshold check is CheckCompact or CheckGo by where it goes.
		action: func(tr, to string) (string, bool) {
			if tr == "check" {
				if to == "compacting" {
					return "CheckCompact", true
				}
				return "CheckGo", true
			}
			a, ok := map[string]string{"answer": "CallAnswer", "tools": "CallTools", "fail": "CallFail",
				"overflow": "CallOverflow", "compact_ok": "CompactOK", "compact_refused": "CompactRefused", "done": "Done"}[tr]
			return a, ok
		},
		absSpec: func(s specState) string {
			return fmt.Sprintf("%s reason=%s status=%s overflowed=%v", s.str("phase"), s.str("reason"), s.str("status"), s.flag("overflowed"))
		},
		absTraced: func(raw []byte) (string, string, error) {
			v, p, err := decode(raw, func(v struct {
				Phase, Reason, Status string
				Overflowed            bool
			}) string {
				return v.Phase
			})
			return fmt.Sprintf("%s reason=%s status=%s overflowed=%v", p, none(v.Reason), none(v.Status), v.Overflowed), p, err
		},
	},
}
