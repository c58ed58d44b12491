//go:build race

package edgetest

// raceEnabled: the race detector slows decoding tenfold, so the timing
// checks use smaller streams.
const raceEnabled = true
