package runtime_test

// Transcript tests of whole runs: each file in
// testdata/runs/*.txt is one scenario, driven through the public Go API
// (runtime.New, Agent.Run, RunControl.Events/Steer/FollowUp/Cancel/Wait,
// Agent.OpenSession) against the loopback fake provider, and compared with
// the expected transcript the file holds. Run with -update to rewrite the
// expected sections ("events" and "records") from the actual runs.
//
// # Format
//
// A file is a sequence of sections, each opened by a line "-- name --"
// (txtar's header form); text before the first header is a comment. The
// sections, in this order:
//
//	-- setup --      "key: value" lines, optional:
//	                   route: chat (default), responses, anthropic, or native
//	                     (openai-responses over WebSocket from a models.json
//	                     in the test's Home, qualified for native steering)
//	                   context_window: N, max_output: N (the route's limits)
//	                   max_retries: N (Agent.SetMaxRetries)
//	                   shell: true (a CLI policy layer allowing shell and process)
//	                   gate: v[:reason], … (a TerminalGateFunc answering each
//	                     review in turn with accept, reject or stop)
//	                   file: name=content (a workspace file; repeatable)
//	-- script --     the fake provider's script, as JSON (fakeprovider.ParseScript)
//	-- run --        one run; repeat the section for more runs on the same
//	                 session (a resumed session). "key: value" lines:
//	                   prompt: text (repeat: N makes it N copies of "text ")
//	                   tools: a,b,c ("none" for no tools; absent: the default set)
//	                   allow_file_mutation: true
//	                   max_steps: N
//	                   fault: kind args (injected before the run; repeatable):
//	                     status CODE [retry_after=S], error_event TYPE [after=N],
//	                     cut AFTER, refuse (reopened at the first recovery
//	                     sleep), overflow TOKENS WINDOW
//	                   on: TYPE[#N][/FIELD=VALUE] ACTION [text] — when the Nth
//	                     (default first) event of TYPE arrives (optionally
//	                     one whose rendered FIELD is VALUE), do ACTION:
//	                     steer, followup, cancel, or touch NAME (creates the
//	                     workspace file NAME: a waiting bash command such as
//	                     "until [ -e released ]; do sleep 0.01; done" holds
//	                     the run inside its tool until then); triggers fire
//	                     once each, in file order
//	                 Without shell: true the policy is the default one (no
//	                 shell); files change only with allow_file_mutation.
//	-- events --     expected: every run's events, one per line, "TYPE k=v …"
//	                 with the payload's JSON fields flattened and sorted
//	                 (zero values left out); consecutive model_delta events
//	                 of one step and channel are joined into one line; an
//	                 action taken shows as "# ACTION text=… err=…" right
//	                 after its event; then "wait …" when Wait's result
//	                 differs from final_result, and RunControl.Undelivered
//	-- records --    expected: the session file's records, one per line,
//	                 "TYPE k=v …" likewise, then the final Session view
//	                 (Agent.OpenSession): its entries and run ends, then the
//	                 workspace's files and their contents
//
// Values that change between runs are normalised: timestamps, durations
// and delays (keys ending in _ms or _at) are dropped; the workspace, Home
// and the fake's address are replaced with $WS, $HOME and $FAKE, an inline
// route's id (a hash of its address) with inline-ID; long values are cut
// at 120 bytes. For brevity the session file's path, a record's "type"
// (it leads the line), the sources of policy values and a tool decision's
// copy of the policy are left out.
//
// Runs are synchronised on events only: recovery sleeps are no-ops
// (Options.Sleep), jitter is zero, and an action that must land while a
// tool runs holds the tool with a bash command waiting for a file the
// action creates, so every scenario is deterministic.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime"
	"octet.dev/host/runtime/fakeprovider"
)

var update = flag.Bool("update", false, "rewrite the expected sections of testdata/runs/*.txt")

type section struct {
	name string
	body string
}

// parseSections splits a transcript file into its comment and sections.
func parseSections(data string) (comment string, secs []section) {
	lines := strings.SplitAfter(data, "\n")
	cur := -1
	var b strings.Builder
	flush := func() {
		if cur < 0 {
			comment = b.String()
		} else {
			secs[cur].body = b.String()
		}
		b.Reset()
	}
	for _, l := range lines {
		t := strings.TrimRight(l, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			secs = append(secs, section{name: strings.TrimSpace(t[3 : len(t)-3])})
			cur = len(secs) - 1
			continue
		}
		b.WriteString(l)
	}
	flush()
	return comment, secs
}

// keyValues parses "key: value" lines; blank lines and # comments are skipped.
func keyValues(t *testing.T, body string) [][2]string {
	t.Helper()
	var out [][2]string
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("line %q is not key: value", l)
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}

type trigger struct {
	typ, field, value string
	nth               int
	action, text      string
	seen              int
	done              bool
}

type runSpec struct {
	prompt   string
	repeat   int
	tools    []string
	toolsSet bool
	mutation bool
	maxSteps *int
	faults   []string
	triggers []*trigger
}

type scenario struct {
	route       string
	window, out int
	maxRetries  *int
	shell       bool
	gate        []runtime.GateDecision
	files       [][2]string
	script      fakeprovider.Script
	runs        []*runSpec
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func parseScenario(t *testing.T, secs []section) *scenario {
	t.Helper()
	sc := &scenario{route: "chat"}
	for _, s := range secs {
		switch s.name {
		case "setup":
			for _, kv := range keyValues(t, s.body) {
				switch k, v := kv[0], kv[1]; k {
				case "route":
					sc.route = v
				case "context_window":
					sc.window = atoi(t, v)
				case "max_output":
					sc.out = atoi(t, v)
				case "max_retries":
					n := atoi(t, v)
					sc.maxRetries = &n
				case "shell":
					sc.shell = v == "true"
				case "gate":
					for _, g := range strings.Split(v, ",") {
						verdict, reason, _ := strings.Cut(strings.TrimSpace(g), ":")
						sc.gate = append(sc.gate, runtime.GateDecision{Verdict: runtime.GateVerdict(verdict), Reason: reason})
					}
				case "file":
					name, content, _ := strings.Cut(v, "=")
					sc.files = append(sc.files, [2]string{name, content})
				default:
					t.Fatalf("setup: unknown key %q", k)
				}
			}
		case "script":
			script, err := fakeprovider.ParseScript([]byte(s.body))
			if err != nil {
				t.Fatal(err)
			}
			sc.script = script
		case "run":
			r := &runSpec{}
			for _, kv := range keyValues(t, s.body) {
				switch k, v := kv[0], kv[1]; k {
				case "prompt":
					r.prompt = v
				case "repeat":
					r.repeat = atoi(t, v)
				case "tools":
					r.toolsSet = true
					r.tools = []string{}
					if v != "none" {
						for _, name := range strings.Split(v, ",") {
							r.tools = append(r.tools, strings.TrimSpace(name))
						}
					}
				case "allow_file_mutation":
					r.mutation = v == "true"
				case "max_steps":
					n := atoi(t, v)
					r.maxSteps = &n
				case "fault":
					r.faults = append(r.faults, v)
				case "on":
					f := strings.Fields(v)
					if len(f) < 2 {
						t.Fatalf("on: %q", v)
					}
					tr := &trigger{nth: 1, action: f[1], text: strings.Join(f[2:], " ")}
					m := f[0]
					if m2, fv, ok := strings.Cut(m, "/"); ok {
						m = m2
						tr.field, tr.value, _ = strings.Cut(fv, "=")
					}
					if m2, n, ok := strings.Cut(m, "#"); ok {
						m = m2
						tr.nth = atoi(t, n)
					}
					tr.typ = m
					r.triggers = append(r.triggers, tr)
				default:
					t.Fatalf("run: unknown key %q", k)
				}
			}
			sc.runs = append(sc.runs, r)
		case "events", "records":
		default:
			t.Fatalf("unknown section %q", s.name)
		}
	}
	if len(sc.runs) == 0 {
		t.Fatal("no run section")
	}
	return sc
}

func (r *runSpec) fullPrompt() string {
	if r.repeat > 0 {
		return strings.Repeat(r.prompt+" ", r.repeat)
	}
	return r.prompt
}

// fault parses one fault line.
func parseFault(t *testing.T, mode fakeprovider.Mode, s string) fakeprovider.Fault {
	t.Helper()
	f := strings.Fields(s)
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	opt := func(name string) string {
		for _, a := range f[1:] {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
		}
		return ""
	}
	switch f[0] {
	case "status":
		return fakeprovider.FaultStatus{Code: atoi(t, arg(1)), RetryAfter: opt("retry_after")}
	case "error_event":
		fe := fakeprovider.FaultErrorEvent{Type: arg(1)}
		if a := opt("after"); a != "" {
			fe.AfterEvents = atoi(t, a)
		}
		return fe
	case "cut":
		return fakeprovider.FaultCutMidStream{AfterEvents: atoi(t, arg(1))}
	case "refuse":
		return fakeprovider.FaultRefuse{}
	case "overflow":
		return fakeprovider.OverflowFault(mode, "", atoi(t, arg(1)), atoi(t, arg(2)))
	}
	t.Fatalf("unknown fault %q", s)
	return nil
}

// normalizer replaces the values that change between runs.
type normalizer struct {
	repl *strings.Replacer
}

var (
	portRE   = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	inlineRE = regexp.MustCompile(`inline-[0-9a-f]{16}`)
)

func (n normalizer) str(s string) string {
	s = n.repl.Replace(s)
	s = portRE.ReplaceAllString(s, "$$FAKE")
	s = inlineRE.ReplaceAllString(s, "inline-ID")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// dropKey tells which keys carry timestamps or durations.
func dropKey(k string) bool {
	switch k {
	case "time", "ts", "timestamp", "created_at", "started_at", "finished_at", "elapsed", "duration",
		"source", "shell_path", "type", "session_file", "sessionFile", "policy":
		return true
	}
	return strings.HasSuffix(k, "_ms") || strings.HasSuffix(k, "MS") || strings.HasSuffix(k, "_at")
}

// flatten renders a decoded JSON value as sorted "k=v" pairs.
func (n normalizer) flatten(prefix string, v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if dropKey(k) {
				continue
			}
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			n.flatten(p, x[k], out)
		}
	case []any:
		if len(x) == 0 {
			return
		}
		for i, e := range x {
			n.flatten(prefix+"["+strconv.Itoa(i)+"]", e, out)
		}
	case nil:
	case string:
		if x == "" {
			return
		}
		*out = append(*out, prefix+"="+strconv.Quote(n.str(x)))
	case bool:
		if x {
			*out = append(*out, prefix+"=true")
		}
	case json.Number:
		if x.String() != "0" {
			*out = append(*out, prefix+"="+x.String())
		}
	default:
		*out = append(*out, fmt.Sprintf("%s=%v", prefix, x))
	}
}

func (n normalizer) line(typ string, payload []byte) string {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return typ + " <" + err.Error() + ">"
	}
	var kvs []string
	n.flatten("", v, &kvs)
	return strings.TrimSpace(typ + " " + strings.Join(kvs, " "))
}

// renderEvents renders a run's events, joining consecutive text deltas.
func (n normalizer) renderEvents(evs []runtime.Event) []string {
	var out []string
	for i := 0; i < len(evs); i++ {
		ev := evs[i]
		if d, ok := ev.Data.(*protocol.ModelDelta); ok {
			text := d.Text
			for i+1 < len(evs) {
				d2, ok := evs[i+1].Data.(*protocol.ModelDelta)
				if !ok || d2.Step != d.Step || d2.Channel != d.Channel {
					break
				}
				text += d2.Text
				i++
			}
			merged := *d
			merged.Text = text
			b, _ := json.Marshal(&merged)
			out = append(out, n.line(string(ev.Type), b))
			continue
		}
		b, err := json.Marshal(ev.Data)
		if err != nil {
			out = append(out, string(ev.Type)+" <"+err.Error()+">")
			continue
		}
		out = append(out, n.line(string(ev.Type), b))
	}
	return out
}

// renderRecords renders the session file's records, then the Session's
// entries and run ends as read back through Agent.OpenSession.
func (n normalizer) renderRecords(t *testing.T, agent *runtime.Agent, dir, id string) []string {
	t.Helper()
	s, err := agent.OpenSession(dir, id)
	if err != nil {
		return []string{"open: " + n.str(err.Error())}
	}
	defer s.Close()
	f, err := os.Open(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			out = append(out, "<"+err.Error()+">")
			continue
		}
		out = append(out, n.line(rec.Type, sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	out = append(out, "# session view")
	for _, e := range s.Entries() {
		l := fmt.Sprintf("entry %d %s", e.ID, e.Kind)
		if e.Role != "" {
			l += " role=" + e.Role
		}
		if e.Origin != "" {
			l += " origin=" + e.Origin
		}
		if e.RunID != "" {
			l += " run=" + e.RunID
		}
		if len(e.ToolCalls) > 0 {
			l += " tool_calls=" + strings.Join(e.ToolCalls, ",")
		}
		if e.OnHead {
			l += " on_head"
		}
		if e.Text != "" {
			l += " text=" + strconv.Quote(n.str(e.Text))
		}
		out = append(out, l)
	}
	for _, e := range s.RunEnds() {
		out = append(out, fmt.Sprintf("run_end run=%s status=%s code=%s", e.RunID, e.Status, e.Code))
	}
	if s.HasUnsettledNativeSteering() {
		out = append(out, "unsettled native steering")
	}
	if s.HasUncertainUsage() {
		out = append(out, "uncertain usage")
	}
	return out
}

func TestRunTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "runs", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	t.Cleanup(func() {
		t.Logf("transition logs replayed against the specs: %d transitions of %d runs", tracedSteps.Load(), tracedRuns.Load())
	})
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	comment, secs := parseSections(string(data))
	sc := parseScenario(t, secs)

	mode := fakeprovider.ModeChat
	switch sc.route {
	case "responses", "native":
		mode = fakeprovider.ModeResponses
	case "anthropic":
		mode = fakeprovider.ModeAnthropic
	}
	fake, err := fakeprovider.New(fakeprovider.Options{Script: sc.script})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	home, ws := t.TempDir(), t.TempDir()
	for _, f := range sc.files {
		if err := os.WriteFile(filepath.Join(ws, f[0]), []byte(f[1]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var route *runtime.InlineRoute
	model := "m"
	if sc.route == "native" {
		if err := os.MkdirAll(filepath.Join(home, ".octet"), 0o700); err != nil {
			t.Fatal(err)
		}
		cfg := `{"providers":{"lab":{"base_url":"` + fake.BaseURL(fakeprovider.ModeResponses) + `","provider_mode":"openai-responses","transport":"websocket",` +
			`"models":[{"id":"lab-model","context_window_tokens":32768,"max_output_tokens":4096,"native_steering":true}]}}}`
		if err := os.WriteFile(filepath.Join(home, ".octet", "models.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		model = "lab-model"
	} else {
		route = &runtime.InlineRoute{Provider: "fake", BaseURL: fake.BaseURL(mode), Mode: string(mode)}
		if sc.window > 0 {
			w, o := sc.window, sc.out
			if o == 0 {
				o = 1000
			}
			route.ContextWindowTokens, route.MaxOutputTokens = &w, &o
		}
	}

	// The first recovery sleep reopens a refusing fake: a network wait
	// that ends, with no real time passing.
	var reopenOnce sync.Once
	var trace traceLog // every transition, checked against the specs at the end (tracecheck_test.go)
	opts := runtime.Options{Home: home, Logger: trace.logger(), Getenv: func(string) string { return "" }, Jitter: func() float64 { return 0 },
		Sleep: func(ctx context.Context, _ time.Duration) error {
			if fake.Refusing() {
				reopenOnce.Do(func() {
					if err := fake.Reopen(); err != nil {
						t.Error(err)
					}
				})
			}
			return ctx.Err()
		}}
	if sc.shell {
		yes := true
		opts.PolicyLayers = []runtime.PolicyLayer{{Source: runtime.SourceCLI, AllowShell: &yes, AllowProcess: &yes}}
	}
	agent, err := runtime.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if sc.maxRetries != nil {
		agent.SetMaxRetries(*sc.maxRetries)
	}
	if sc.gate != nil {
		var mu sync.Mutex
		next := 0
		err := agent.SetTerminalGate(runtime.TerminalGateFunc(func(_ context.Context, in runtime.GateInput) (runtime.GateDecision, error) {
			mu.Lock()
			defer mu.Unlock()
			if next >= len(sc.gate) {
				return runtime.GateDecision{Verdict: runtime.GateAccept}, nil
			}
			d := sc.gate[next]
			next++
			return d, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
	}

	n := normalizer{repl: strings.NewReplacer(ws, "$WS", home, "$HOME", fake.URL(), "$FAKE")}
	dir := filepath.Join(home, "sessions")
	const sessionID = "transcript"
	var events []string
	for i, r := range sc.runs {
		for _, f := range r.faults {
			fake.InjectFault(parseFault(t, mode, f))
		}
		runID := "run-" + strconv.Itoa(i+1)
		req := runtime.RunRequest{RunID: runID, Workspace: ws, Model: model, Prompt: r.fullPrompt(),
			SessionDir: dir, SessionID: sessionID, AllowFileMutation: r.mutation, MaxSteps: r.maxSteps, Route: route}
		if r.toolsSet {
			req.Tools = r.tools
		}
		events = append(events, "# "+runID)
		// A bound on a run that would hang: it ends the run as canceled,
		// which the transcript then shows.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rc, err := agent.Run(ctx, req)
		if err != nil {
			events = append(events, "run error: "+n.str(err.Error()))
			continue
		}
		// rendered holds the lines so far; pending the events not rendered
		// yet (an action line ends a run of text deltas to join).
		var rendered []string
		var pending []runtime.Event
		for ev := range rc.Events() {
			pending = append(pending, ev)
			line := n.renderEvents([]runtime.Event{ev})[0]
			for _, tr := range r.triggers {
				if tr.done || string(ev.Type) != tr.typ {
					continue
				}
				if tr.field != "" && !strings.Contains(" "+line+" ", " "+tr.field+"="+tr.value+" ") &&
					!strings.Contains(" "+line+" ", " "+tr.field+"="+strconv.Quote(tr.value)+" ") {
					continue
				}
				tr.seen++
				if tr.seen < tr.nth {
					continue
				}
				tr.done = true
				var err error
				switch tr.action {
				case "steer":
					err = rc.Steer(tr.text)
				case "followup":
					err = rc.FollowUp(tr.text)
				case "cancel":
					rc.Cancel()
				case "touch":
					err = os.WriteFile(filepath.Join(ws, tr.text), nil, 0o600)
				default:
					t.Fatalf("unknown action %q", tr.action)
				}
				b, _ := json.Marshal(map[string]any{"text": tr.text, "err": errString(err)})
				rendered = append(append(rendered, n.renderEvents(pending)...), n.line("# "+tr.action, b))
				pending = nil
			}
		}
		res := rc.Wait()
		rendered = append(rendered, n.renderEvents(pending)...)
		events = append(events, rendered...)
		b, _ := json.Marshal(res)
		if w := n.line("final_result", b); len(rendered) == 0 || rendered[len(rendered)-1] != w {
			events = append(events, "wait "+w)
		}
		for _, m := range rc.Undelivered() {
			events = append(events, fmt.Sprintf("undelivered %s %q", m.Kind, n.str(m.Text)))
		}
		for _, tr := range r.triggers {
			if !tr.done {
				events = append(events, fmt.Sprintf("# trigger %s#%d never fired", tr.typ, tr.nth))
			}
		}
	}
	records := n.renderRecords(t, agent, dir, sessionID)
	records = append(records, "# workspace")
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(ws, e.Name()))
		records = append(records, fmt.Sprintf("file %s %q", e.Name(), n.str(string(b))))
	}
	if !agent.WaitRuns(10 * time.Second) {
		t.Error("runs still going")
	}
	st := checkTrace(t, &trace)
	if sc.route == "native" && st.ByMachine["native_steering"] == 0 {
		t.Errorf("a native steering scenario traced no native steering transition: %s", st)
	}

	if *update {
		var b strings.Builder
		b.WriteString(comment)
		for _, s := range secs {
			switch s.name {
			case "events", "records":
				continue
			}
			fmt.Fprintf(&b, "-- %s --\n%s", s.name, s.body)
		}
		fmt.Fprintf(&b, "-- events --\n%s\n-- records --\n%s\n", strings.Join(events, "\n"), strings.Join(records, "\n"))
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := map[string][]string{}
	for _, s := range secs {
		if s.name == "events" || s.name == "records" {
			want[s.name] = slices.DeleteFunc(strings.Split(s.body, "\n"), func(l string) bool { return l == "" })
		}
	}
	if d := cmp.Diff(want["events"], events); d != "" {
		t.Errorf("%s: events differ (-want +got); rerun with -update if the change is intended:\n%s", file, d)
	}
	if d := cmp.Diff(want["records"], records); d != "" {
		t.Errorf("%s: records differ (-want +got); rerun with -update if the change is intended:\n%s", file, d)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
