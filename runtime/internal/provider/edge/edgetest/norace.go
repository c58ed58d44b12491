//go:build !race

package edgetest

const raceEnabled = false
