// Package session is the protocol session machine of native-host protocol 1
// (CONTRACT §2–§5): requests are served one at a time, every request ends
// with exactly one terminal event, seq is gapless per request, nothing is
// written after shutdown or after the output fails.
//
// The machine is pure: the host feeds it inputs (a request was read, an
// event is about to be written, stdin reached EOF, a write failed) and
// performs the effects it returns, in order. It is built on
// github.com/qmuntal/stateless with external state storage (through
// fsm/internal/machine), so the whole state is the value State, which tests
// enumerate (see tla/Session.tla). The machine is the one owner of seq:
// the host encodes each event with NextSeq and writes it with the seq of
// the effect.
//
// A Machine is owned by one goroutine.
package session
