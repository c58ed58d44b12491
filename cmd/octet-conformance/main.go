package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// config is what the flags select.
type config struct {
	host             string
	args             []string
	env              []string
	level            string
	timeout          time.Duration
	handshakeTimeout time.Duration
	filter           *regexp.Regexp
	seed             uint64
	fuzzN            int
	list             bool
	json             bool
	junit            string
	casesDir         string
}

// kit runs the cases and counts the outcomes.
type kit struct {
	cfg                     config
	out                     io.Writer
	fake                    *fakeprovider.Server
	tmp                     string
	results                 []result
	passed, failed, skipped int
	// failedPrereq maps a prerequisite whose providing case failed to
	// that case's name: the cases requiring it are skipped.
	failedPrereq map[string]string
}

// fakeAPIKey is the key the fake provider requires; run cases send it.
const fakeAPIKey = "conformance-key-0123456789"

func (k *kit) contract() bool { return k.cfg.level == "contract" }

// Exit statuses.
const (
	exitPass  = 0 // every case that ran passed
	exitFail  = 1 // a case failed, or none ran
	exitUsage = 2 // bad flags or arguments, an unreadable case folder
)

func usage(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintln(w, "octet-conformance — check that a program speaks native-host protocol 1.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Usage:")
		fmt.Fprintln(w, "  octet-conformance [flags] HOST [HOST-ARGS...]")
		fmt.Fprintln(w, "  octet-conformance [flags] -host HOST [HOST-ARGS...]")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Exit status: 0 every case that ran passed, 1 a case failed (or none ran), 2 bad usage.")
		fmt.Fprintln(w, "See docs/conformance.md of octet-host for the case format and the reports.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Flags:")
		fs.PrintDefaults()
	}
}

// run is the command without its process: it returns the exit status.
func run(args, env []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("octet-conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage(fs)
	host := fs.String("host", "", "path of the program under test (else the first argument); the remaining arguments are its own")
	level := fs.String("level", "contract", "what to hold the host to: protocol (the protocol source) or contract (also this project's decisions and error codes)")
	timeout := fs.Duration("timeout", 30*time.Second, "longest wait for one event, and for the host's exit")
	handshake := fs.Duration("handshake-timeout", 5*time.Second, "longest wait in the case that checks the handshake (hello does no I/O); at most -timeout")
	filter := fs.String("run", "", "run only the cases whose name matches this regular expression")
	seed := fs.Uint64("seed", 1, "seed of the framing fuzzer's random mutants")
	fuzzN := fs.Int("fuzz", 60, "number of random mutants the framing fuzzer sends, besides its fixed edge cases")
	list := fs.Bool("list", false, "list the cases (level, rule, name) and exit; with -json, as JSON lines")
	jsonOut := fs.Bool("json", false, "report one JSON object per case on stdout (name, level, rule, verdict, evidence, time); the summary line goes to stderr")
	junit := fs.String("junit", "", "also write a JUnit XML report to this file")
	casesDir := fs.String("cases", "", "read the transcript cases (*.txtar) from this folder instead of the embedded ones")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass
		}
		return exitUsage
	}
	cfg := config{host: *host, args: fs.Args(), env: env, level: *level, timeout: *timeout, handshakeTimeout: *handshake,
		seed: *seed, fuzzN: *fuzzN, list: *list, json: *jsonOut, junit: *junit, casesDir: *casesDir}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "octet-conformance: "+format+"\n", a...)
		return exitUsage
	}
	if cfg.host == "" && !cfg.list {
		if len(cfg.args) == 0 {
			return bad("no host to test: give its path as the first argument or with -host")
		}
		cfg.host, cfg.args = cfg.args[0], cfg.args[1:]
	}
	if cfg.level != "protocol" && cfg.level != "contract" {
		return bad("-level must be protocol or contract, not %q", cfg.level)
	}
	if cfg.timeout <= 0 {
		return bad("-timeout must be positive")
	}
	if cfg.handshakeTimeout <= 0 {
		return bad("-handshake-timeout must be positive")
	}
	cfg.handshakeTimeout = min(cfg.handshakeTimeout, cfg.timeout)
	if cfg.fuzzN < 0 || cfg.fuzzN > 100000 {
		return bad("-fuzz must be 0..100000")
	}
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			return bad("-run: %v", err)
		}
		cfg.filter = re
	}
	if !cfg.list {
		p, err := exec.LookPath(cfg.host)
		if err != nil {
			return bad("host %q: %v", cfg.host, err)
		}
		cfg.host = p
	}
	var cases []kcase
	var err error
	if cfg.casesDir != "" {
		if cases, err = loadCaseDir(cfg.casesDir); err != nil {
			return bad("-cases %s: %v", cfg.casesDir, err)
		}
	} else if cases, err = loadCases(); err != nil {
		return bad("embedded cases: %v", err) // a build of the kit with a broken case file
	}
	cases = ordered(cases)
	fuzz := fuzzCases(cfg.seed, cfg.fuzzN)
	if cfg.list {
		listCases(stdout, cfg.json, cases, fuzz)
		return exitPass
	}
	var junitFile *os.File
	if cfg.junit != "" {
		// Created before the run, so that a bad path is a usage error,
		// not an hour's results lost.
		if junitFile, err = os.Create(cfg.junit); err != nil {
			return bad("-junit: %v", err)
		}
		defer junitFile.Close()
	}

	k := &kit{cfg: cfg, out: stdout, failedPrereq: map[string]string{}}
	k.tmp, err = os.MkdirTemp("", "octet-conformance-")
	if err != nil {
		return bad("%v", err)
	}
	defer os.RemoveAll(k.tmp)
	k.fake, err = fakeprovider.New(fakeprovider.Options{APIKey: fakeAPIKey})
	if err != nil {
		return bad("starting the fake provider: %v", err)
	}
	defer k.fake.Close()

	started := time.Now()
	for _, c := range cases {
		if !k.selected(c.name) {
			continue
		}
		rec := record{c.name, c.level(), c.rule}
		if why := k.skipReason(c.contract, c.requires); why != "" {
			k.report(rec, verdictSkip, why, 0)
			continue
		}
		t0 := time.Now()
		err := k.runCase(c)
		k.verdict(rec, err, time.Since(t0))
		if err != nil {
			for _, p := range c.provides {
				k.failedPrereq[p] = c.name
			}
		}
	}
	k.runFuzz(fuzz)
	took := time.Since(started)

	sum := stdout
	if cfg.json {
		sum = stderr // stdout carries JSON lines only
	}
	fmt.Fprintln(sum, k.summary())
	if k.passed+k.failed == 0 {
		fmt.Fprintln(stderr, "octet-conformance: no case ran (see -list and -run)")
	}
	if junitFile != nil {
		if err := k.writeJUnit(junitFile, started, took); err == nil {
			err = junitFile.Close()
		} else {
			fmt.Fprintf(stderr, "octet-conformance: -junit: %v\n", err)
			return exitFail
		}
	}
	if k.failed > 0 || k.passed == 0 {
		return exitFail
	}
	return exitPass
}

// ordered returns the cases with every case after the cases providing
// what it requires (each in name order otherwise), so that a failed
// prerequisite is known before the cases that depend on it run.
func ordered(cases []kcase) []kcase {
	providers := map[string][]int{}
	for i, c := range cases {
		for _, p := range c.provides {
			providers[p] = append(providers[p], i)
		}
	}
	depth := make([]int, len(cases)) // 0: not yet computed; else 1 + depth
	var visit func(i int, seen map[int]bool) int
	visit = func(i int, seen map[int]bool) int {
		if depth[i] > 0 {
			return depth[i]
		}
		if seen[i] {
			return 1 // a cycle: broken here, ordered by name
		}
		seen[i] = true
		d := 1
		for _, p := range cases[i].requires {
			for _, j := range providers[p] {
				d = max(d, 1+visit(j, seen))
			}
		}
		depth[i] = d
		return d
	}
	for i := range cases {
		visit(i, map[int]bool{})
	}
	idx := make([]int, len(cases))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return depth[a] - depth[b] })
	out := make([]kcase, len(cases))
	for i, j := range idx {
		out[i] = cases[j]
	}
	return out
}

// listCases prints the cases: level, rule and name per line, or with
// -json one object per case.
func listCases(w io.Writer, asJSON bool, cases []kcase, fuzz []fuzzCase) {
	type entry struct {
		Name     string   `json:"name"`
		Level    string   `json:"level"`
		Rule     string   `json:"rule"`
		Requires []string `json:"requires"`
		Provides []string `json:"provides"`
	}
	var es []entry
	for _, c := range cases {
		es = append(es, entry{c.name, c.level(), c.rule, c.requires, c.provides})
	}
	for _, c := range fuzz {
		es = append(es, entry{c.name, c.level(), c.rule, c.requires(), nil})
	}
	es = append(es, entry{fuzzEOF.name, fuzzEOF.level, fuzzEOF.rule, fuzzRequires, nil})
	for _, e := range es {
		if asJSON {
			if e.Requires == nil {
				e.Requires = []string{}
			}
			if e.Provides == nil {
				e.Provides = []string{}
			}
			b, _ := json.Marshal(e)
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		fmt.Fprintf(w, "%-8s  %-18s  %s\n", e.Level, e.Rule, e.Name)
	}
}

func (k *kit) selected(name string) bool {
	return k.cfg.filter == nil || k.cfg.filter.MatchString(name)
}

// skipReason says why a case does not run, or "" when it does.
func (k *kit) skipReason(contract bool, requires []string) string {
	if contract && !k.contract() {
		return "a decision of this project's contract; run with -level contract"
	}
	for _, p := range requires {
		if by, ok := k.failedPrereq[p]; ok {
			return fmt.Sprintf("prerequisite %s failed in %s", p, by)
		}
	}
	return ""
}

// verdict reports a case that ran: it passed when err is nil.
func (k *kit) verdict(rec record, err error, took time.Duration) {
	if err == nil {
		k.report(rec, verdictPass, "", took)
		return
	}
	k.report(rec, verdictFail, err.Error(), took)
}

// fuzzEOF is the last case of the framing fuzzer: the host that served
// every fuzz line exits 0 at EOF.
var fuzzEOF = record{name: "fuzz/eof-exits-0", level: "protocol", rule: "CONTRACT §2"}

// fuzzRequires are the prerequisites of every generated case: a host
// that fails the handshake or does not answer a malformed line would make
// each of them wait for its timeout. A line answered by a run's
// final_result also requires the run prerequisite.
var fuzzRequires = []string{prereqHandshake, prereqFraming}

func (c fuzzCase) requires() []string {
	if c.exp.kind == "refused" || c.exp.kind == "run" {
		return append(slices.Clip(fuzzRequires), prereqRun)
	}
	return fuzzRequires
}

// runFuzz sends the fuzz cases on one host, each followed by a hello
// probe. After a failure the host is replaced, so one fault does not fail
// every later case.
func (k *kit) runFuzz(cases []fuzzCase) {
	var s *session
	defer func() {
		if s != nil {
			s.h.kill()
		}
	}()
	probe := 0
	for _, c := range cases {
		if !k.selected(c.name) {
			continue
		}
		rec := record{c.name, c.level(), c.rule}
		if why := k.skipReason(c.contract, c.requires()); why != "" {
			k.report(rec, verdictSkip, why, 0)
			continue
		}
		t0 := time.Now()
		if s == nil {
			var err error
			if s, err = k.newSession(k.cfg.timeout); err != nil {
				k.verdict(rec, err, time.Since(t0))
				continue
			}
		}
		err := s.do(step{exp: c.exp}, c.line)
		if err == nil {
			probe++
			id := fmt.Sprintf("probe-%d", probe)
			if perr := s.do(step{exp: expect{id: &id, kind: "hello"}}, helloLine(id)); perr != nil {
				err = fmt.Errorf("the host did not keep serving: the hello probe after the line failed: %w", perr)
			}
		}
		if err != nil {
			err = fmt.Errorf("line %s: %w", excerpt(c.line), err)
			s.h.kill()
			s = nil
		}
		k.verdict(rec, err, time.Since(t0))
	}
	if s != nil {
		t0 := time.Now()
		k.verdict(fuzzEOF, s.finish(0), time.Since(t0))
	}
}

// excerpt quotes the start of a request line for a message.
func excerpt(line []byte) string {
	const max = 160
	if len(line) > max {
		return fmt.Sprintf("%q… (%d bytes)", line[:max], len(line))
	}
	return fmt.Sprintf("%q", line)
}
