package operator

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"octet.dev/host/runtime"
)

// Flags are the operator flags, registered on a FlagSet by Register.
type Flags struct {
	fs             *flag.FlagSet
	allowShell     *bool
	allowProcess   *bool
	allowRemote    *bool
	bashTimeout    *int64
	maxOutput      *int64
	shellPath      *string
	trustWorkspace *bool
	idleTimeout    *int64
	roots          rootList
}

// Register defines the operator flags on fs.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{
		fs:             fs,
		allowShell:     fs.Bool("allow-shell", false, "enable the shell effect for the bash tool (bash also needs --allow-process)"),
		allowProcess:   fs.Bool("allow-process", false, "enable the process effect for the bash tool (bash also needs --allow-shell)"),
		allowRemote:    fs.Bool("allow-remote-read", false, "enable network reads by tools"),
		bashTimeout:    fs.Int64("bash-timeout-ms", 0, "default timeout of a bash command, in milliseconds"),
		maxOutput:      fs.Int64("max-output-bytes", 0, "bound on one tool's output returned to the model, in bytes"),
		shellPath:      fs.String("shell-path", "", "absolute path of the shell the bash tool runs"),
		trustWorkspace: fs.Bool("trust-workspace", false, "apply each run's workspace .octet/settings.json"),
		idleTimeout:    fs.Int64("provider-idle-timeout-ms", 60000, "longest a provider stream may go without a byte before the attempt counts as failed"),
	}
	fs.Var(&f.roots, "resource-root", "an explicit resource layer, an absolute directory (repeatable; after OCTET_RESOURCE_ROOTS, in the order given)")
	return f
}

// Options returns the agent options the operator set, after fs.Parse: the
// environment layer (read with getenv), the CLI layer holding exactly the
// policy flags given on the command line, TrustWorkspace and IdleTimeout.
// An error is a usage error (a bad variable or flag value).
func (f *Flags) Options(getenv func(string) string) (runtime.Options, error) {
	env, err := runtime.PolicyFromEnv(getenv)
	if err != nil {
		return runtime.Options{}, err
	}
	cli := runtime.PolicyLayer{Source: runtime.SourceCLI}
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "allow-shell":
			cli.AllowShell = f.allowShell
		case "allow-process":
			cli.AllowProcess = f.allowProcess
		case "allow-remote-read":
			cli.AllowRemoteRead = f.allowRemote
		case "bash-timeout-ms":
			cli.BashTimeoutMS = f.bashTimeout
		case "max-output-bytes":
			cli.MaxOutputBytes = f.maxOutput
		case "shell-path":
			cli.ShellPath = f.shellPath
		}
	})
	if *f.idleTimeout < 1 {
		return runtime.Options{}, errors.New("--provider-idle-timeout-ms must be at least 1")
	}
	roots, err := runtime.ResourceRootsFromEnv(getenv)
	if err != nil {
		return runtime.Options{}, err
	}
	return runtime.Options{
		PolicyLayers:   []runtime.PolicyLayer{env, cli},
		TrustWorkspace: *f.trustWorkspace,
		IdleTimeout:    time.Duration(*f.idleTimeout) * time.Millisecond,
		ResourceRoots:  append(roots, f.roots...),
	}, nil
}

// rootList collects --resource-root flags, each an absolute directory.
type rootList []string

func (l *rootList) String() string { return strings.Join(*l, string(filepath.ListSeparator)) }

func (l *rootList) Set(v string) error {
	if !filepath.IsAbs(v) {
		return errors.New("must be an absolute directory")
	}
	*l = append(*l, filepath.Clean(v))
	return nil
}

// NonDumpable makes the process non-dumpable, so that its /proc entries
// (environ, fd) are closed to the processes its tools start.
func NonDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot make the process non-dumpable: %w", err)
	}
	return nil
}

// ReserveStdout moves the output stream to a private descriptor and points
// fd 1 (and os.Stdout) at stderr, so that no stray print, library or child
// process can write into it (CONTRACT §2).
func ReserveStdout() (io.Writer, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("dup stdout: %w", err)
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("redirect fd 1 to stderr: %w", err)
	}
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(fd), "protocol-stdout"), nil
}
