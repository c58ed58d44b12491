// Package opfiletest makes the hostile operator files the readers of
// runtime/internal/opfile must refuse, for the tests of every reader.
package opfiletest
