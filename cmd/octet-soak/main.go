package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"octet.dev/host/internal/soak"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("octet-soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg soak.Config
	fs.StringVar(&cfg.HostPath, "host", "", "the octet-host `binary` to soak (required)")
	fs.IntVar(&cfg.Runs, "runs", 10000, "how many runs to send")
	fs.IntVar(&cfg.Concurrency, "concurrency", 4, "requests kept outstanding at once (the host serves them one at a time, in order)")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed of the workload and the faults (0: from the clock)")
	fs.Float64Var(&cfg.FaultRate, "fault-rate", 0.15, "probability that a run is sent with a fault injected (0: none)")
	fs.Float64Var(&cfg.ToolRate, "tool-rate", 0.3, "probability that a run's model calls tools first (0: never)")
	fs.IntVar(&cfg.ReportEvery, "report-every", 1000, "runs between progress lines")
	fs.IntVar(&cfg.IdleTimeoutMS, "idle-timeout-ms", 500, "the host's --provider-idle-timeout-ms")
	fs.IntVar(&cfg.SchedTraceMS, "schedtrace-ms", 2000, "period of the host's scheduler dumps, from which goroutines are counted (negative: off)")
	jsonPath := fs.String("json", "", "also write the report as JSON to `file`")
	tracePath := fs.String("trace-log", "", "run the host at --log-level trace and write its log to `file` (octet-tracecheck replays it)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || cfg.HostPath == "" || cfg.Runs <= 0 || cfg.Concurrency <= 0 || cfg.FaultRate < 0 || cfg.FaultRate > 1 || cfg.ToolRate < 0 || cfg.ToolRate > 1 {
		fmt.Fprintln(stderr, "octet-soak: give -host, positive -runs and -concurrency, and rates in [0, 1]")
		return 2
	}
	// Zero means "none" on the command line; Config reads zero as "the
	// default" and a negative value as "none".
	if cfg.FaultRate == 0 {
		cfg.FaultRate = -1
	}
	if cfg.ToolRate == 0 {
		cfg.ToolRate = -1
	}
	cfg.Progress = func(s soak.Sample, r *soak.Report) {
		fmt.Fprintf(stdout, "runs %6d  completed %6d  errored %4d  blocked %3d  lost %d  violations %d  rss %s (peak %s)  fds %d  threads %d  goroutines %d  %.1f runs/s\n",
			s.Runs, r.Completed, r.Errored, r.Blocked, r.Lost, r.Violations, mib(s.RSSKiB), mib(s.HWMKiB), s.FDs, s.Threads, s.Goroutines,
			float64(s.Runs)/time.Duration(s.ElapsedMS*int64(time.Millisecond)).Seconds())
	}
	fmt.Fprintf(stdout, "octet-soak: %d runs, concurrency %d, fault rate %.2f, tool rate %.2f, host %s\n",
		cfg.Runs, cfg.Concurrency, max(cfg.FaultRate, 0), max(cfg.ToolRate, 0), cfg.HostPath)
	var traceLog *bufio.Writer
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err != nil {
			fmt.Fprintf(stderr, "octet-soak: %v\n", err)
			return 2
		}
		defer f.Close()
		traceLog = bufio.NewWriterSize(f, 1<<20)
		cfg.HostLog = traceLog
	}
	rep, err := soak.Run(ctx, cfg)
	if traceLog != nil {
		if ferr := traceLog.Flush(); ferr != nil && err == nil {
			err = ferr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "octet-soak: %v\n", err)
		return 2
	}
	summary(stdout, rep)
	if *jsonPath != "" {
		raw, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonPath, append(raw, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "octet-soak: %v\n", err)
			return 2
		}
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

func mib(kib int64) string {
	if kib < 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f MiB", float64(kib)/1024)
}

func summary(w io.Writer, r *soak.Report) {
	fmt.Fprintf(w, "\n== soak summary (seed %d)\n", r.Seed)
	fmt.Fprintf(w, "runs sent %d, ended %d: completed %d, error %d, blocked %d, protocol_error %d; lost terminal events %d\n",
		r.Runs, r.Ended, r.Completed, r.Errored, r.Blocked, r.ProtocolErr, r.Lost)
	fmt.Fprintf(w, "frames %d, provider retries %d, tool calls %d, faults injected %d (served %d)\n",
		r.Frames, r.Retries, r.ToolCalls, total(r.FaultsInjected), r.FaultsServed)
	fmt.Fprintf(w, "faults: %s\n", counts(r.FaultsInjected))
	if len(r.ErrorCodes) > 0 {
		fmt.Fprintf(w, "error codes: %s\n", counts(r.ErrorCodes))
	}
	fmt.Fprintf(w, "duration %.1f s, %.1f runs/s\n", float64(r.DurationMS)/1000, r.RunsPerSecond)
	fmt.Fprintf(w, "host RSS start %s, end %s, peak %s; fds start %d, end %d; threads start %d, end %d; goroutines start %d, end %d, peak %d\n",
		mib(r.Start.RSSKiB), mib(r.End.RSSKiB), mib(r.PeakRSSKiB), r.Start.FDs, r.End.FDs, r.Start.Threads, r.End.Threads,
		r.Start.Goroutines, r.End.Goroutines, r.PeakGoroutines)
	fmt.Fprintf(w, "host exit: %s\n", r.HostExit)
	fmt.Fprintf(w, "violations %d\n", r.Violations)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
	if !r.OK() && r.HostLogTail != "" {
		fmt.Fprintf(w, "host log tail:\n%s\n", r.HostLogTail)
	}
	if r.OK() {
		fmt.Fprintln(w, "OK: every run ended with exactly one final_result, seq gapless, no protocol violation")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", k, m[k])
	}
	return s
}
