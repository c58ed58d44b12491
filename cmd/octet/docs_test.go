package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"octet.dev/host/internal/testbin"
)

// TestDocsBothBinaries: octet --docs and octet-host --docs materialize the
// same embedded documentation into the one managed folder under the data
// home and print it; two of them at once both succeed; an unwritable data
// home fails with a clear error and exit status 1, and a run still works.
func TestDocsBothBinaries(t *testing.T) {
	hostBin := testbin.MustBuild(testbin.Host)
	e := newEnv(t)
	data := filepath.Join(e.home, "data")
	docs := func(bin string, dataHome string) (string, string, error) {
		cmd := exec.Command(bin, "--docs")
		cmd.Env = append(os.Environ(), "HOME="+e.home, "XDG_DATA_HOME="+dataHome)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return strings.TrimSpace(out.String()), errb.String(), err
	}
	want := filepath.Join(data, "octet", "docs")
	// Both binaries at once, twice over: each prints the folder.
	var wg sync.WaitGroup
	for _, bin := range []string{octetBin, hostBin, octetBin, hostBin} {
		wg.Go(func() {
			if dir, stderr, err := docs(bin, data); err != nil || dir != want {
				t.Errorf("%s --docs: %q, %v (%s)", filepath.Base(bin), dir, err, stderr)
			}
		})
	}
	wg.Wait()
	for _, f := range []string{"README.md", "docs/protocol.md", "docs/embedding.md", "spec/CONTRACT.md", "spec/schema/protocol-1.schema.json", "SKILL.md", "ERRORS.md"} {
		if _, err := os.Stat(filepath.Join(want, f)); err != nil {
			t.Errorf("the folder lacks %s: %v", f, err)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(data, "octet")); len(ents) != 1 {
		t.Errorf("the data home holds %d entries beside the folder (a temporary left?)", len(ents)-1)
	}

	// A data home that cannot be written: a clear error, exit status 1.
	blocked := filepath.Join(e.home, "a-file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{octetBin, hostBin} {
		dir, stderr, err := docs(bin, blocked)
		var ee *exec.ExitError
		if dir != "" || !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr, "documentation folder "+filepath.Join(blocked, "octet", "docs")) {
			t.Errorf("%s --docs in an unwritable data home: %q, %v, stderr %q", filepath.Base(bin), dir, err, stderr)
		}
	}
}
