package octethost

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestOtherSystemsGetOneReadableError builds the module for systems the
// host does not support and requires the one error internal/linuxonly
// makes, and nothing else: a Linux-only package that forgets its guard
// import shows up here as raw "undefined: unix.…" errors.
func TestOtherSystemsGetOneReadableError(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the module; skipped with -short")
	}
	for _, goos := range []string{"darwin", "windows"} {
		cmd := exec.Command("go", "build", "./...")
		// No VCS stamping: only the compiler's messages may be printed.
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("GOOS=%s go build ./... succeeded; the host must refuse to build outside Linux", goos)
			continue
		}
		var lines []string
		for l := range strings.Lines(strings.TrimSpace(string(out))) {
			if !strings.HasPrefix(l, "go: downloading ") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		if len(lines) != 2 || lines[0] != "# octet.dev/host/internal/linuxonly" ||
			!strings.Contains(lines[1], `"octet.dev/host requires Linux (see README, Requirements)`) {
			t.Errorf("GOOS=%s go build ./...: want exactly the internal/linuxonly error, got:\n%s", goos, out)
		}
	}
	// wire/client alone builds on other Unix systems.
	cmd := exec.Command("go", "build", "./wire/client")
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("GOOS=darwin go build ./wire/client: %v\n%s", err, out)
	}
}
