// Command octet-conformance checks that a program speaks native-host
// protocol 1 the way this project's contract states it. It launches the
// program under test as a subprocess, in its own process group (killed
// whole on a timeout and at the end of each case), and drives it through:
//
//   - transcript cases (embedded from cases/): hello, models, shutdown,
//     EOF, malformed, oversized and duplicate requests, refused runs, and
//     runs against a fake model provider it starts on loopback (a text
//     answer, a tool call, a provider retry, a session echo);
//   - a framing fuzzer: generated malformed and edge lines (invalid UTF-8,
//     lines over 1 MiB, non-objects, duplicate and unknown members, bad
//     ids, wrong types), each of which must get its protocol_error while
//     the host keeps serving, checked by a hello probe after each line.
//
// Every event is checked against the event envelope and, as it arrives,
// against the session invariants of package octet.dev/host/spec (seq
// from 1 without gaps per request, exactly one terminal event, serial
// requests, nothing after shutdown); runs against spec's run lifecycle and
// recovery invariants. What a host may choose — message texts, the
// sdk_version, feature flags other than the two the protocol fixes, the
// catalog, the number of model_delta events — is never compared.
//
// Usage:
//
//	octet-conformance [flags] HOST [HOST-ARGS...]
//	octet-conformance [flags] -host HOST [HOST-ARGS...]
//
// It prints one line per case (ok, FAIL with the reason, or skip) and a
// summary line "N passed, N failed", and exits 0 when every case passed, 1
// when one failed, 2 on bad usage.
//
// -level protocol checks only what the protocol source fixes: it skips
// the cases of this project's own decisions (an empty line is an error,
// duplicate request ids, a tolerated trailing carriage return), lets a
// malformed line's protocol_error carry request_id null, and accepts any
// snake_case error code. The default, -level contract, also requires this
// project's error codes (README: "Protocol error codes" and "Run error
// codes").
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"octet.dev/host/runtime/fakeprovider"
)

func main() {
	os.Exit(run(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

// config is what the flags select.
type config struct {
	host    string
	args    []string
	env     []string
	level   string
	timeout time.Duration
	filter  *regexp.Regexp
	seed    uint64
	fuzzN   int
	list    bool
}

// kit runs the cases and counts the outcomes.
type kit struct {
	cfg                     config
	out                     io.Writer
	fake                    *fakeprovider.Server
	tmp                     string
	passed, failed, skipped int
}

// fakeAPIKey is the key the fake provider requires; run cases send it.
const fakeAPIKey = "conformance-key-0123456789"

func (k *kit) contract() bool { return k.cfg.level == "contract" }

func usage(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintln(w, "octet-conformance — check that a program speaks native-host protocol 1.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Usage:")
		fmt.Fprintln(w, "  octet-conformance [flags] HOST [HOST-ARGS...]")
		fmt.Fprintln(w, "  octet-conformance [flags] -host HOST [HOST-ARGS...]")
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
	filter := fs.String("run", "", "run only the cases whose name matches this regular expression")
	seed := fs.Uint64("seed", 1, "seed of the framing fuzzer's random mutants")
	fuzzN := fs.Int("fuzz", 60, "number of random mutants the framing fuzzer sends, besides its fixed edge cases")
	list := fs.Bool("list", false, "list the cases and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cfg := config{host: *host, args: fs.Args(), env: env, level: *level, timeout: *timeout, seed: *seed, fuzzN: *fuzzN, list: *list}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "octet-conformance: "+format+"\n", a...)
		return 2
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
	cases, err := loadCases()
	if err != nil {
		return bad("embedded cases: %v", err) // a build of the kit with a broken case file
	}
	fuzz := fuzzCases(cfg.seed, cfg.fuzzN)
	if cfg.list {
		for _, c := range cases {
			fmt.Fprintln(stdout, c.name)
		}
		for _, c := range fuzz {
			fmt.Fprintln(stdout, c.name)
		}
		return 0
	}

	k := &kit{cfg: cfg, out: stdout}
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

	for _, c := range cases {
		if !k.selected(c.name) {
			continue
		}
		if c.contract && !k.contract() {
			k.skip(c.name)
			continue
		}
		k.report(c.name, k.runCase(c))
	}
	k.runFuzz(fuzz)
	fmt.Fprintf(stdout, "%d passed, %d failed", k.passed, k.failed)
	if k.skipped > 0 {
		fmt.Fprintf(stdout, ", %d skipped (-level %s)", k.skipped, k.cfg.level)
	}
	fmt.Fprintln(stdout)
	if k.passed+k.failed == 0 {
		fmt.Fprintln(stderr, "octet-conformance: no case ran (see -list and -run)")
	}
	if k.failed > 0 || k.passed == 0 {
		return 1
	}
	return 0
}

func (k *kit) selected(name string) bool {
	return k.cfg.filter == nil || k.cfg.filter.MatchString(name)
}

func (k *kit) skip(name string) {
	k.skipped++
	fmt.Fprintf(k.out, "skip  %s (a decision of this project's contract; run with -level contract)\n", name)
}

func (k *kit) report(name string, err error) {
	if err == nil {
		k.passed++
		fmt.Fprintf(k.out, "ok    %s\n", name)
		return
	}
	k.failed++
	fmt.Fprintf(k.out, "FAIL  %s\n    %s\n", name, strings.ReplaceAll(err.Error(), "\n", "\n    "))
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
		if c.contract && !k.contract() {
			k.skip(c.name)
			continue
		}
		if s == nil {
			var err error
			if s, err = k.newSession(); err != nil {
				k.report(c.name, err)
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
		k.report(c.name, err)
	}
	if s != nil {
		k.report("fuzz/eof-exits-0", s.finish(0))
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
