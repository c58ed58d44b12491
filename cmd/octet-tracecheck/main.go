// Command octet-tracecheck replays the state machines' transition log of
// real runs against the TLA+ specs (fsm/tracecheck): the trace-level
// lines of octet-host --log-level trace (its stderr) or of a runtime
// logger at runtime.LevelTrace, as JSON lines. Each file is one log (one
// host process); "-" or no file reads standard input. It prints what it
// checked, or the first step a spec does not allow, and exits 1 then.
//
//	octet-host --log-level trace 2>host.log …
//	octet-tracecheck -tla tla host.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"octet.dev/host/fsm/tracecheck"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("octet-tracecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("tla", "tla", "the directory of the specs' graphs (<Spec>.graph.json, tla/check.mjs writes them)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	read := func(f string) ([]byte, error) { return os.ReadFile(filepath.Join(*dir, f)) }
	for _, name := range files {
		c, err := tracecheck.Load(read)
		if err != nil {
			fmt.Fprintf(stderr, "octet-tracecheck: %v\n", err)
			return 2
		}
		in := os.Stdin
		if name != "-" {
			if in, err = os.Open(name); err != nil {
				fmt.Fprintf(stderr, "octet-tracecheck: %v\n", err)
				return 2
			}
		}
		err = check(c, in)
		if in != os.Stdin {
			in.Close()
		}
		if err != nil {
			fmt.Fprintf(stderr, "octet-tracecheck: %s: %v\n", name, err)
			if _, ok := err.(*tracecheck.Violation); ok {
				return 1
			}
			return 2
		}
		fmt.Fprintf(stdout, "%s: %s\n", name, c.Stats())
	}
	return 0
}

// check feeds every line of r to c. Lines may be long (a state of many
// fields); bufio.Reader has no limit.
func check(c *tracecheck.Checker, r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if verr := c.Line(line); verr != nil {
				return verr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
