package fakeprovider

import (
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// TestSplitProperties checks the splitters on any text: the pieces join
// back to the text, none is empty, and none cuts a UTF-8 character.
func TestSplitProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "text")
		chunk := rapid.IntRange(-2, 9).Draw(t, "chunk")
		turn := Turn{Chunk: chunk}
		for what, pieces := range map[string][]string{"text": turn.textPieces(s), "args": turn.argPieces(s)} {
			if got := strings.Join(pieces, ""); got != s {
				t.Fatalf("%s pieces %q join to %q", what, pieces, got)
			}
			for _, p := range pieces {
				if p == "" || !utf8.ValidString(p) {
					t.Fatalf("%s piece %q of %q is empty or cuts a character", what, p, s)
				}
				if chunk > 0 && len(p) > chunk+utf8.UTFMax-1 {
					t.Fatalf("%s piece %q longer than chunk %d allows", what, p, chunk)
				}
			}
		}
	})
}
