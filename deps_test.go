package octethost

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// rules says which module packages a package may import, by path prefix
// relative to the module ("." is the root package alone, not everything
// below it). A package matches the longest rule prefix.
// Anything not allowed is forbidden, so a new import needs a new rule.
var rules = []struct {
	pkg   string
	allow []string
}{
	{"protocol", nil},                      // the vocabulary is a leaf: nothing of the module
	{"protocol/rpc", []string{"protocol"}}, // the RPC mode's vocabulary: renames protocol 1's run events
	{"fsm", []string{"fsm", "protocol"}},
	{"fsm/turn", []string{"fsm", "fsm/run", "protocol"}}, // the loop's step boundaries: pure, never the engine or an I/O package
	{"wire", []string{"wire", "protocol", "internal/textutil"}},
	{"wire/client", []string{"wire", "protocol", "internal/linuxonly", "internal/procgroup"}},
	{"spec", []string{"spec", "protocol"}},
	// compaction (Compactor): sees the run through its Env, never the engine
	{"runtime/internal/engine/compact", []string{"runtime/internal/engine/modelcall", "runtime/internal/store", "runtime/provider", "fsm", "protocol", "internal/textutil"}},
	{"runtime/internal/engine/reasoning", []string{"runtime/internal/catalog", "runtime/internal/store", "runtime/internal/policy", "runtime/provider", "protocol"}}, // a run's reasoning and delegation decisions: never the engine
	{"runtime", []string{"runtime", "fsm", "protocol", "internal/linuxonly", "internal/textutil"}},
	// steering, queued and native: never the engine
	{"runtime/internal/engine/steer", []string{"runtime/internal/engine/modelcall", "runtime/internal/store", "runtime/provider", "fsm", "protocol"}},
	{"runtime/internal", []string{"runtime/internal", "runtime/provider", "fsm", "protocol", "internal/linuxonly", "internal/textutil"}}, // the engine and its parts: never the façade (runtime); of the public packages only the provider seam
	{"runtime/provider", nil},                                                       // the provider seam (SPI): a leaf of public types every wire and the engine share
	{"runtime/copilot", []string{"runtime/internal/copilot"}},                       // the public Copilot seam and the CLI's login, over the internal one: never the façade
	{"runtime/internal/copilot", []string{"runtime/internal", "internal/textutil"}}, // the Copilot device flow, exchange, inventory, transport
	{"runtime/internal/copilot/copilottest", nil},                                   // loopback GitHub, the seam's loopback endpoint, a fake clock: std only, imported by tests only (testOnly)
	// the terminal gate: its run through gate.Env, never the engine
	{"runtime/internal/engine/gate", []string{"runtime/internal/engine/modelcall", "runtime/internal/catalog", "runtime/internal/store", "runtime/provider", "fsm/run", "protocol", "internal/textutil"}},
	// run preparation (request to prepared run): never the engine, which calls it; of the engine's parts only the gate state a run holds
	{"runtime/internal/prepare", []string{"runtime/internal/auth", "runtime/internal/catalog", "runtime/internal/confine", "runtime/internal/customheader", "runtime/internal/engine/gate", "runtime/internal/media", "runtime/internal/opfile", "runtime/internal/policy", "runtime/internal/resources", "runtime/internal/store", "runtime/internal/tools", "runtime/provider", "protocol", "internal/textutil"}},
	// the Codex and Copilot routes' credential glue: never the engine
	{"runtime/internal/auth", []string{"runtime/internal/codex", "runtime/internal/copilot", "runtime/internal/catalog", "runtime/internal/provider", "runtime/provider", "protocol", "internal/textutil"}},
	{"runtime/internal/provider/providertest", []string{"runtime/internal/provider", "runtime/provider"}},                // the wire suites' shared harness: imported by their tests only (testOnly)
	{"runtime/internal/credfile", []string{"internal/linuxonly", "runtime/internal/sysfile", "runtime/internal/opfile"}}, // the credential store's file primitives
	{"internal/linuxonly", nil},
	{"internal/procgroup", nil},                                      // a started host's process group and reaping: a leaf, shared by wire/client and the conformance kit
	{"runtime/internal/sysfile", []string{"internal/linuxonly"}},     // flock(2), directory fsync: a leaf, shared by the store and codex
	{"runtime/internal/opfile", []string{"internal/linuxonly"}},      // the operator files' one reader (settings, models.json, credentials): a leaf
	{"runtime/internal/customheader", []string{"internal/textutil"}}, // custom_headers rules: shared by catalog, the run validator and edge
	{"internal/textutil", nil},                                       // UTF-8-safe cuts, the error-code shape: a leaf, shared by the wire and the runtime
	{"internal/schematest", []string{"spec/schema"}},                 // tests' schema validation
	{"internal/testbin", []string{"internal/linuxonly"}},             // tests' builds of the commands, shared by a go test run: a leaf, imported by tests only (testOnly)
	{"internal/host", []string{"internal/host", "wire", "runtime", "fsm", "protocol"}},
	{"internal/operator", []string{"runtime"}}, // the operator flags and process set-up both binaries share
	{"cmd/octet-host", []string{"cmd/octet-host", "internal/host", "internal/operator", "runtime", "protocol", "spec/schema", "."}}, // ".": the root package alone (its embedded documentation)
	{"cmd/octet", []string{"cmd/octet", "internal/operator", "runtime", "protocol", "wire", "spec/schema", "."}},                    // print and RPC modes: the runtime directly, no NDJSON host; ".": the embedded documentation
	{"cmd/octet-fake-provider", []string{"runtime/fakeprovider"}},
	{"cmd/octet-conformance", []string{"spec", "protocol", "runtime/fakeprovider", "internal/linuxonly", "internal/procgroup"}}, // a black-box kit: the wire only, never the host's packages
	{"examples", []string{"runtime/fakeprovider"}},                                                                              // tests of the client examples, against the built binary
	{"internal/soak", []string{"internal/soak", "runtime/fakeprovider", "spec", "protocol", "internal/linuxonly"}},
	{"cmd/octet-soak", []string{"internal/soak"}},
	{"cmd/octet-tracecheck", []string{"fsm"}}, // replays a transition log against the specs (fsm/tracecheck)
	{"proptest", []string{"proptest", "fsm", "wire", "runtime", "internal/host", "spec", "protocol"}},
	{"", []string{""}}, // the root package (this doc) only: see ruleFor
}

// testOnly are the test-support packages: only _test.go files may import
// them (TestTestOnly). The rules above judge the imports of non-test
// files alone (go list's Imports); test files may import these, and any
// package of the module.
var testOnly = []string{"internal/testbin", "internal/schematest", "runtime/internal/provider/providertest", "runtime/internal/provider/edge/edgetest", "runtime/internal/copilot/copilottest"}

// forbiddenStd are standard packages that pure machines must not import:
// I/O, clocks, randomness, processes, logging (DESIGN §1). Each also
// forbids the packages below it ("net" forbids "net/http", "os" forbids
// "os/signal").
var forbiddenStd = []string{"os", "io", "net", "time", "math/rand", "crypto/rand", "syscall", "bufio", "log", "runtime/debug", "embed", "plugin"}

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

// ruleFor returns the imports allowed to package p and whether a rule
// covers it. The root rule covers the root package alone, so a new
// top-level package without its own rule fails instead of inheriting
// "anything".
func ruleFor(p string) ([]string, bool) {
	best, allow := -1, []string(nil)
	for _, r := range rules {
		if r.pkg == "" && p != "" {
			continue
		}
		if under(p, r.pkg) && len(r.pkg) > best {
			best, allow = len(r.pkg), r.allow
		}
	}
	return allow, best >= 0
}

// TestImportDirection fails when an import breaks the rules of DESIGN §1.
func TestImportDirection(t *testing.T) {
	for _, p := range goList(t) {
		from, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		allow, covered := ruleFor(from)
		if !covered {
			t.Errorf("%s has no rule in deps_test.go: add one", from)
		}
		for _, imp := range p.Imports {
			to, ok := rel(imp)
			if !ok {
				if under(from, "fsm") {
					for _, f := range forbiddenStd {
						if under(imp, f) {
							t.Errorf("%s imports %s: machines are pure (no I/O, clock or randomness)", from, imp)
						}
					}
				}
				continue
			}
			permitted := false
			for _, a := range allow {
				if a == "." && to == "" || a != "." && under(to, a) {
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
		{"cmd/octet-host", "wire"}, {"cmd/octet-fake-provider", "internal/host"}, {"cmd/octet-fake-provider", "runtime/internal/store"},
		{"runtime/internal/engine", "runtime"}, {"runtime/internal/store", "runtime"}, {"runtime/internal/engine", "runtime/copilot"}, {"runtime/copilot", "runtime"}, {"runtime/copilot", "runtime/internal/engine"}, {"runtime/internal/auth", "runtime/internal/engine"}, {"runtime/internal/auth", "runtime"}, {"runtime/internal/prepare", "runtime/internal/engine"}, {"runtime/internal/prepare", "runtime"}, {"runtime/provider", "runtime"}, {"runtime/provider", "runtime/internal"},
		{"protocol", "wire"}, {"protocol", "runtime"}, {"protocol", "fsm"}, {"protocol", "spec"}, {"protocol/x", "wire"},
	}
	for _, f := range forbidden {
		allow, _ := ruleFor(f[0])
		for _, a := range allow {
			if under(f[1], a) {
				t.Errorf("rule for %s permits %s", f[0], f[1])
			}
		}
	}
	if _, covered := ruleFor("newtool"); covered {
		t.Error("a top-level package without a rule is covered by the root rule")
	}
	for _, imp := range []string{"net/http", "os/signal", "math/rand/v2", "io/fs", "log/slog"} {
		found := false
		for _, f := range forbiddenStd {
			found = found || under(imp, f)
		}
		if !found {
			t.Errorf("machines may import %s", imp)
		}
	}
}

// TestTestOnly fails when a non-test file imports a test-support package
// (test-support packages may build on each other). A package's own rule
// could allow it by prefix: "runtime" covers everything below runtime/.
func TestTestOnly(t *testing.T) {
	for _, p := range goList(t) {
		from, _ := rel(p.ImportPath)
		support := false
		for _, o := range testOnly {
			support = support || under(from, o)
		}
		if support {
			continue
		}
		for _, imp := range p.Imports {
			to, ok := rel(imp)
			if !ok {
				continue
			}
			for _, o := range testOnly {
				if under(to, o) {
					t.Errorf("%s imports %s, which is for tests only", from, to)
				}
			}
		}
	}
}
