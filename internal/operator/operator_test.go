package operator

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, env map[string]string, args ...string) (*Flags, error) {
	t.Helper()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	_, err := f.Options(func(k string) string { return env[k] })
	return f, err
}

// The CLI layer holds exactly the flags given; the environment layer comes
// first (lower precedence); the idle timeout and trust are passed on.
func TestOptionsLayers(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	f := Register(fs)
	if err := fs.Parse([]string{"--allow-shell", "--bash-timeout-ms", "500", "--trust-workspace", "--provider-idle-timeout-ms", "250"}); err != nil {
		t.Fatal(err)
	}
	opts, err := f.Options(func(k string) string {
		if k == "OCTET_ALLOW_PROCESS" {
			return "true"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.PolicyLayers) != 2 {
		t.Fatalf("layers: %+v", opts.PolicyLayers)
	}
	env, cli := opts.PolicyLayers[0], opts.PolicyLayers[1]
	if env.AllowProcess == nil || !*env.AllowProcess || env.AllowShell != nil {
		t.Errorf("environment layer: %+v", env)
	}
	if cli.AllowShell == nil || !*cli.AllowShell || cli.BashTimeoutMS == nil || *cli.BashTimeoutMS != 500 ||
		cli.AllowProcess != nil || cli.MaxOutputBytes != nil || cli.ShellPath != nil || cli.AllowRemoteRead != nil {
		t.Errorf("CLI layer holds more or less than the flags given: %+v", cli)
	}
	if !opts.TrustWorkspace || opts.IdleTimeout != 250*time.Millisecond {
		t.Errorf("trust %v, idle timeout %v", opts.TrustWorkspace, opts.IdleTimeout)
	}
}

func TestOptionsErrors(t *testing.T) {
	if _, err := parse(t, nil, "--provider-idle-timeout-ms", "0"); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("idle timeout 0: %v", err)
	}
	if _, err := parse(t, map[string]string{"OCTET_ALLOW_SHELL": "maybe"}); err == nil || !strings.Contains(err.Error(), "OCTET_ALLOW_SHELL") {
		t.Errorf("a bad environment value: %v", err)
	}
}
