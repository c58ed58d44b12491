package store

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// loadBytes loads a session file held in memory, as Open loads one from
// disk, with the given decoding goroutines and read size. The Session
// reads records back from data; it cannot append.
func loadBytes(data []byte, workers, chunk int) (*Session, error) {
	s := &Session{id: "f", now: clock()}
	return s, s.loadFrom(bytes.NewReader(data), workers, chunk)
}

// refOfFile is the reference model of the session file at path: a full
// decode of every record.
func refOfFile(t *testing.T, path, id string) (*refSession, refLoaded) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := refParse(data, path, id)
	if err != nil {
		t.Fatalf("reference parse: %v", err)
	}
	return newRef(id, l.recs), l
}

// routesOf returns "" and the routes of the native checkpoints of recs.
func routesOf(recs []Record) []string {
	routes := []string{"", "other route"}
	for _, r := range recs {
		if c, ok := r.Body.(Compaction); ok && c.Route != "" {
			routes = append(routes, c.Route)
		}
	}
	return routes
}

// compareSession checks every query of s against the reference model of
// the same records.
func compareSession(t tb, s *Session, ref *refSession) {
	t.Helper()
	diff := func(what string, want, got any, opts ...cmp.Option) {
		t.Helper()
		if d := cmp.Diff(want, got, opts...); d != "" {
			t.Fatalf("%s (-reference +lazy):\n%s", what, d)
		}
	}
	recs, err := s.ReadRecords()
	if err != nil {
		t.Fatalf("ReadRecords: %v", err)
	}
	diff("Records", ref.recs, recs, cmpopts.EquateEmpty())
	diff("Head", ref.head, s.Head())
	diff("MessageCount", ref.msgs, s.MessageCount())
	diff("UnknownRecords", ref.unknown, s.UnknownRecords())
	diff("HasUncertainUsage", ref.HasUncertainUsage(), s.HasUncertainUsage())
	diff("UsageUncertaintyRecords", ref.uncertain, s.UsageUncertaintyRecords())
	diff("UsageRecords", ref.usages(), s.UsageRecords())
	diff("reasoning", []any{ref.reasoning, ref.reasoningUpdate, ref.ultra}, []any{s.LatestReasoning(), s.ReasoningUpdate(), s.ReasoningUltra()})
	diff("native steering", ref.native.unknown, s.UnknownNativeSteering())
	diff("RunEnds", ref.RunEnds(), s.RunEnds())
	rf, rok := ref.forkOrigin()
	sf, sok := s.ForkOrigin()
	diff("ForkOrigin", []any{rf, rok}, []any{sf, sok})
	ru, ra, rok2 := ref.ContextUsage()
	su, sa, sok2 := s.ContextUsage()
	diff("ContextUsage", []any{ru, ra, rok2}, []any{su, sa, sok2})
	entries, err := s.ReadEntries()
	if err != nil {
		t.Fatalf("ReadEntries: %v", err)
	}
	diff("Entries", ref.Entries(), entries)
	for _, route := range routesOf(ref.recs) {
		msgs, err := s.Conversation(route)
		if err != nil {
			t.Fatalf("Conversation(%q): %v", route, err)
		}
		want := ref.MessagesFor(route)
		diff("MessagesFor("+route+")", want, msgs)
		diff("ConversationOrdinals("+route+")", ref.ConversationOrdinals(route), s.ConversationOrdinals(route))
		rc, rok := ref.LatestCompaction(route)
		sc, sok := s.LatestCompaction(route)
		diff("LatestCompaction("+route+")", []any{rc, rok}, []any{sc, sok})
		if route == "" {
			diff("HasConversation", len(want) > 0, s.HasConversation())
		}
	}
	fork, err := s.forkRecords()
	if err != nil {
		t.Fatalf("forkRecords: %v", err)
	}
	diff("forkRecords", ref.forkRecords(), fork)
	if s.failed != nil {
		t.Fatalf("the session failed: %v", s.failed)
	}
}

// tb is what compareSession needs of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// HasUncertainUsage is the reference of Session.HasUncertainUsage.
func (s *refSession) HasUncertainUsage() bool {
	return len(s.uncertain) > 0 || len(s.native.unknown) > 0
}

// longText is JSON string content (escapes included) longer than skimMax,
// so loading skims it.
var longText = strings.Repeat(`long \"text\"\n é `, 12)
