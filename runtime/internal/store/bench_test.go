package store

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// realisticRecords returns n records shaped like an agent session: runs of a
// user prompt, assistant turns with reasoning and tool calls, tool results,
// and usage entries; message texts are 200 B to 2 KiB.
func realisticRecords(n int) []Record {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over a lazy dog while reading main.go and " +
		"running go test ./... to check that the session store keeps every record intact, " +
		"{\"path\": \"internal/store/session.go\"} → ✓ done; func main() { fmt.Println(\"hi\") }")
	text := func() string {
		size := 200 + rng.IntN(2048-200)
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(12) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	recs := make([]Record, 0, n)
	run, step := 0, 0
	for len(recs) < n {
		runID := "run-" + string(rune('a'+run%26))
		switch {
		case step == 0:
			recs = append(recs, Record{Body: RunStart{RunID: runID}},
				Record{Body: Message{RunID: runID, Message: MessageV1{Role: RoleUser, Text: text()}}})
		case step%4 == 1:
			thought := text()[:150]
			recs = append(recs, Record{Body: Message{RunID: runID, Message: MessageV1{
				Role: RoleAssistant, Reasoning: thought, ReasoningBlocks: []ReasoningBlockV1{{Text: thought, Signature: "EqQBCkgIARABGAIiQ"}},
				ToolCalls: []ToolCallV1{{ID: "call_" + runID, Name: "read", Arguments: `{"path":"internal/store/session.go"}`}},
			}}})
		case step%4 == 2:
			recs = append(recs, Record{Body: Message{RunID: runID, Message: MessageV1{
				Role: RoleTool, ToolCallID: "call_" + runID, ToolName: "read", Text: text(),
			}}})
		case step%4 == 3:
			recs = append(recs, Record{Body: Usage{RunID: runID, Step: step, Model: "gpt-5.6", Usage: UsageV1{
				InputTokens: 12000, OutputTokens: 300, CacheReadTokens: 11000, TotalTokens: 12300,
			}, CostUSD: 0.0123}})
		default:
			recs = append(recs, Record{Body: Message{RunID: runID, Message: MessageV1{Role: RoleAssistant, Text: text()}}},
				Record{Body: RunEnd{RunID: runID, Status: "completed"}})
			run++
			step = -1
		}
		step++
	}
	return recs[:n]
}

func BenchmarkResume10k(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(dir, "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Append(realisticRecords(10_000)...); err != nil {
		b.Fatal(err)
	}
	s.Close()
	fi, err := os.Stat(s.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open(dir, "bench", Options{})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(s.slots); n != 10_000 {
			b.Fatalf("%d records", n)
		}
		s.Close()
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MiB")
}

func BenchmarkAppend(b *testing.B) {
	s, err := Open(b.TempDir(), "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	recs := realisticRecords(64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.Append(recs[i%len(recs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkMessages10k builds the conversation of a 10,000-record session,
// as every run start does: linear without a checkout, a branch walk after
// one.
func BenchmarkMessages10k(b *testing.B) {
	for _, checkout := range []bool{false, true} {
		name := "linear"
		if checkout {
			name = "after-checkout"
		}
		b.Run(name, func(b *testing.B) {
			s, err := Open(b.TempDir(), "bench", Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if err := s.Append(realisticRecords(10_000)...); err != nil {
				b.Fatal(err)
			}
			if checkout {
				es := s.Entries()
				if err := s.Checkout(es[len(es)/2].ID); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if len(s.Messages()) == 0 {
					b.Fatal("no messages")
				}
			}
		})
	}
}
