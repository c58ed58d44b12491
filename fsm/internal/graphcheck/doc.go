// Package graphcheck is the test support the spec-to-code graph tests of
// fsm/session, fsm/run, fsm/recovery, fsm/steering and fsm/compaction
// share (DESIGN §4): a labelled graph over string state keys, the parser
// of the graphs tla/check.mjs exports (tla/<Spec>.graph.json), a bounded
// readable diff of two graphs, and the checks the wasm checker cannot
// make (no deadlock, absorbing terminal states, every state can still
// finish, no livelock).
//
// A machine's test explores the real machine, keys each state by its spec
// projection (Key of the spec's variables) and builds a Graph; the graph
// must Equal the one ParseSpecGraph reads. The package does no I/O: the
// tests read the files and pass the bytes in.
package graphcheck
