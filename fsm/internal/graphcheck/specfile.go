package graphcheck

// TB is the part of testing.TB that CheckSpecFile uses (the package does
// not import testing: fsm/tracecheck, a command's package, imports it).
type TB interface {
	Helper()
	Log(args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// CheckSpecFile reads, with read (os.ReadFile: the machines' packages do
// no I/O of their own), the graph that the model checker exported for
// spec to path (tla/check.mjs --update writes it) and fails t unless
// machine equals it (MatchSpec); the summary goes to t's log.
func CheckSpecFile(t TB, read func(path string) ([]byte, error), path string, machine Graph, spec string) {
	t.Helper()
	raw, err := read(path)
	if err != nil {
		t.Fatalf("%v (tla/check.mjs --update writes it)", err)
	}
	summary, err := MatchSpec(machine, raw, spec)
	t.Log(summary)
	if err != nil {
		t.Errorf("%s: %v", path, err)
	}
}
