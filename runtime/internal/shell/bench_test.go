package shell

import (
	"context"
	"testing"
)

// BenchmarkRunTrue measures the fixed cost of one command: starting the
// shell and its guard, the /proc scan when it ends, and reaping.
func BenchmarkRunTrue(b *testing.B) {
	var reg Registry
	s := Spec{Shell: bashPath(b), Dir: b.TempDir(), Command: "true", Registry: &reg}
	for b.Loop() {
		res, err := Run(context.Background(), s)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}
