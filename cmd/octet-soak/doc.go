// Command octet-soak drives one octet-host process through many runs
// against an in-process fake provider with random faults (package
// octet.dev/host/internal/soak), checks every frame the host writes, and
// reports the host's memory, file descriptors, threads and goroutines
// along the way. scripts/soak builds the host and runs it.
//
// Usage:
//
//	octet-soak -host path/to/octet-host [-runs 10000] [-concurrency 4] [-seed N]
//	           [-fault-rate 0.15] [-tool-rate 0.3] [-report-every 1000] [-json file]
//
// It prints a progress line every -report-every runs and a summary at the
// end, and exits 0 when every run ended with exactly one terminal event
// and no frame broke a rule, 1 when the soak found a problem, 2 on bad
// flags or when the soak could not start.
package main
