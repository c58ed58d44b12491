package testbin

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// The start-up benchmarks time a binary from its start to its first
// answer and compare it with yardsticks taken in turn with it, in the same
// loop: a machine whose speed drifts during a run (another tenant, CPU
// frequency) then moves the figure and its yardsticks alike, and their
// ratio holds.

// helloRequest is the protocol's hello, the first request a host answers.
const helloRequest = `{"protocol_version":1,"request_id":"probe-1","command":"hello"}` + "\n"

// SpawnHello starts bin with HOME=home, writes a hello request on its
// stdin and returns the time from the start to the line that answers it
// (which must hold a "type":"hello" member). It then closes stdin and
// waits for the process to exit.
func SpawnHello(bin, home string) (time.Duration, error) {
	p, err := start(bin, home)
	if err != nil {
		return 0, err
	}
	io.WriteString(p.stdin, helloRequest)
	line, err := p.stdout.ReadBytes('\n')
	d := time.Since(p.t0)
	werr := p.end()
	switch {
	case err != nil || !bytes.Contains(line, []byte(`"type":"hello"`)):
		return 0, fmt.Errorf("%s: hello answered with %q (%v)", filepath.Base(bin), line, err)
	case werr != nil:
		return 0, fmt.Errorf("%s: %v", filepath.Base(bin), werr)
	}
	return d, nil
}

// SpawnRun starts bin (octet-host) with HOME=home, writes request (one run
// request line, without its newline) on its stdin and returns the time from
// the start to the run's final_result, which must say "completed". It then
// closes stdin and waits for the process to exit. It is the host doing a
// run's whole work, the yardstick of a front end (octet -p) doing the same.
func SpawnRun(bin, home, request string) (time.Duration, error) {
	p, err := start(bin, home)
	if err != nil {
		return 0, err
	}
	io.WriteString(p.stdin, request+"\n")
	var line []byte
	for {
		if line, err = p.stdout.ReadBytes('\n'); err != nil || bytes.Contains(line, []byte(`"type":"final_result"`)) {
			break
		}
	}
	d := time.Since(p.t0)
	werr := p.end()
	switch {
	case err != nil || !bytes.Contains(line, []byte(`"status":"completed"`)):
		return 0, fmt.Errorf("%s: the run ended with %q (%v)", filepath.Base(bin), line, err)
	case werr != nil:
		return 0, fmt.Errorf("%s: %v", filepath.Base(bin), werr)
	}
	return d, nil
}

// started is a process SpawnHello or SpawnRun started, with its stdin and
// stdout piped and the moment just before its start.
type started struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	t0     time.Time
}

func start(bin, home string) (*started, error) {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "HOME="+home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &started{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), t0: t0}, nil
}

// end closes the process's stdin and waits for it to exit.
func (p *started) end() error {
	p.stdin.Close()
	return p.cmd.Wait()
}

// SpawnTrue returns the time to start /bin/true and wait for it: the
// floor of starting any process.
func SpawnTrue() (time.Duration, error) {
	t0 := time.Now()
	err := exec.Command("/bin/true").Run()
	return time.Since(t0), err
}

// BuildGoHello builds, into dir, the yardstick of a Go program: a
// hello-world that answers each line of stdin with a hello line, built with
// the toolchain and the settings the commands are built with
// (CGO_ENABLED=0, as MustBuild builds them). It returns the binary.
func BuildGoHello(dir string) (string, error) {
	goTool, err := findGo()
	if err != nil {
		return "", err
	}
	src := "package main\n\nimport (\n\t\"bufio\"\n\t\"os\"\n)\n\nfunc main() {\n\tr := bufio.NewReader(os.Stdin)\n\tfor {\n" +
		"\t\tif _, err := r.ReadBytes('\\n'); err != nil {\n\t\t\treturn\n\t\t}\n\t\tos.Stdout.WriteString(`{\"type\":\"hello\"}` + \"\\n\")\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hello")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the hello-world: %v\n%s", err, out)
	}
	return bin, nil
}

// MedianMS returns the median of ds in milliseconds (ds is sorted).
func MedianMS(ds []time.Duration) float64 {
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds()) / 1000
}
