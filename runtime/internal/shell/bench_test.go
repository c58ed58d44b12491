package shell

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkRunTrue measures the fixed cost of one command: starting the
// shell and its guard, the /proc scan when it ends, and reaping; in each
// mode (see the package documentation, "Isolation"). The namespaces
// sub-benchmark is skipped where the kernel refuses them.
func BenchmarkRunTrue(b *testing.B) {
	for _, mode := range []string{IsolationNamespaces, IsolationGroups} {
		b.Run("mode="+mode, func(b *testing.B) {
			refused := nsRefused.Load()
			if mode == IsolationGroups {
				nsRefused.Store(true)
				defer nsRefused.Store(refused)
			}
			var reg Registry
			s := Spec{Shell: bashPath(b), Dir: b.TempDir(), Command: "true", Registry: &reg}
			for b.Loop() {
				res, err := Run(context.Background(), s)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%+v, %v", res, err)
				}
			}
			if Isolation() != mode {
				b.Skipf("commands ran with %s", Isolation())
			}
		})
	}
}

// BenchmarkRunTruePaced is BenchmarkRunTrue with a pause between
// commands, as a run issues them (one per model step): what one command's
// start costs a run, with the namespace mode's spare guard ready when the
// command comes (see spare.go). The pause is outside the timer.
// BenchmarkRunTrue, back to back, measures throughput instead: there each
// command also pays for the next one's guard.
func BenchmarkRunTruePaced(b *testing.B) {
	for _, mode := range []string{IsolationNamespaces, IsolationGroups} {
		b.Run("mode="+mode, func(b *testing.B) {
			refused := nsRefused.Load()
			if mode == IsolationGroups {
				nsRefused.Store(true)
				defer nsRefused.Store(refused)
			}
			defer ReleaseSpare()
			var reg Registry
			s := Spec{Shell: bashPath(b), Dir: b.TempDir(), Command: "true", Registry: &reg}
			for b.Loop() {
				b.StopTimer()
				time.Sleep(benchPause)
				b.StartTimer()
				res, err := Run(context.Background(), s)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%+v, %v", res, err)
				}
			}
			if Isolation() != mode {
				b.Skipf("commands ran with %s", Isolation())
			}
		})
	}
}

// benchPause is the pause between BenchmarkRunTruePaced's commands: a
// short model step.
const benchPause = 50 * time.Millisecond

// BenchmarkBashTrue is the floor of BenchmarkRunTrue: bash -c true
// started and reaped by os/exec, nothing else.
func BenchmarkBashTrue(b *testing.B) {
	sh := bashPath(b)
	for b.Loop() {
		if err := exec.Command(sh, "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
