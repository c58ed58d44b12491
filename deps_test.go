package octethost

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// rules says which module packages a package may import, by path prefix
// relative to the module. A package matches the longest rule prefix.
// Anything not allowed is forbidden, so a new import needs a new rule.
var rules = []struct {
	pkg   string
	allow []string
}{
	{"fsm", []string{"fsm"}},
	{"wire", []string{"wire"}},
	{"wire/client", []string{"wire"}},
	{"spec", []string{"spec"}},
	{"runtime", []string{"runtime", "fsm"}},
	{"internal/host", []string{"internal/host", "wire", "runtime", "fsm"}},
	{"cmd/octet-host", []string{"cmd/octet-host", "internal/host", "runtime"}},
	{"proptest", []string{"proptest", "fsm", "wire", "runtime", "internal/host", "spec"}},
	{"", []string{""}}, // the root package (this doc) may import anything
}

// forbiddenStd are standard packages that pure machines must not import:
// I/O, clocks, randomness, processes (DESIGN §1).
var forbiddenStd = []string{"os", "io", "net", "time", "math/rand", "syscall", "os/exec", "bufio"}

type listed struct {
	ImportPath string
	Imports    []string
}

func goList(t *testing.T) []listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

const module = "octet.dev/host"

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

func under(p, prefix string) bool {
	return prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/")
}

func ruleFor(p string) []string {
	best, allow := -1, []string(nil)
	for _, r := range rules {
		if under(p, r.pkg) && len(r.pkg) > best {
			best, allow = len(r.pkg), r.allow
		}
	}
	return allow
}

// TestImportDirection fails when an import breaks the rules of DESIGN §1.
func TestImportDirection(t *testing.T) {
	for _, p := range goList(t) {
		from, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		allow := ruleFor(from)
		for _, imp := range p.Imports {
			to, ok := rel(imp)
			if !ok {
				if under(from, "fsm") {
					for _, f := range forbiddenStd {
						if imp == f {
							t.Errorf("%s imports %s: machines are pure (no I/O, clock or randomness)", from, imp)
						}
					}
				}
				continue
			}
			permitted := false
			for _, a := range allow {
				if under(to, a) {
					permitted = true
				}
			}
			if !permitted {
				t.Errorf("%s imports %s: not allowed by the direction rules", from, to)
			}
		}
	}
}

// TestRulesBite checks the rule table itself forbids the imports DESIGN §1
// names, so TestImportDirection cannot pass vacuously.
func TestRulesBite(t *testing.T) {
	forbidden := [][2]string{
		{"fsm/session", "wire"}, {"fsm/session", "runtime"}, {"wire", "runtime"}, {"wire", "fsm"},
		{"runtime", "wire"}, {"runtime/internal/store", "wire"}, {"wire/client", "runtime"},
		{"cmd/octet-host", "wire"},
	}
	for _, f := range forbidden {
		for _, a := range ruleFor(f[0]) {
			if under(f[1], a) {
				t.Errorf("rule for %s permits %s", f[0], f[1])
			}
		}
	}
}
