package messages

// Prompt caching. The API caches a request's prefix up to each block that
// carries a cache_control breakpoint, in the order tools, system,
// messages, and a later request whose prefix up to a breakpoint is
// byte-identical reads it from the cache instead of paying for it again.
// Every request carries at most maxBreakpoints of them:
//
//   - the last tool, so the tools stay cached when the system prompt
//     changes from run to run;
//   - the system prompt (sent as one text block to carry it), so tools and
//     system stay cached when the conversation changes;
//   - the last block of the newest user turn (a prompt or the results of
//     the previous step's tool calls): the whole conversation so far, which
//     the next step reads back;
//   - the last block of the user turn before it: the breakpoint the
//     previous request wrote, so the step reads that prefix even when the
//     assistant turn and the results since it are more blocks than the
//     API's lookback reaches, or the newest write failed.
//
// A breakpoint goes only on a block the API takes one on: text, image and
// tool_result blocks, never on thinking or redacted_thinking (the API
// rejects cache_control there). A prefix shorter than the model's minimum
// is not cached, which costs nothing. The breakpoints move forward from
// step to step; the bytes of the blocks before them do not change.

// maxBreakpoints is the most cache_control markers the API accepts in one
// request.
const maxBreakpoints = 4

// messageBreakpoints is how many user turns, newest first, get one.
const messageBreakpoints = 2

// cacheControl is a block's cache breakpoint, with the API's default
// lifetime (five minutes, refreshed by every read).
type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is the breakpoint every marked block carries.
var ephemeral = &cacheControl{Type: "ephemeral"}

// systemBlock is the system prompt in its block form, which can carry a
// breakpoint.
type systemBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitzero"`
}

// systemBlocks returns the system field for text: none when it is empty
// (the API rejects an empty text block), else one marked text block.
func systemBlocks(text string) []systemBlock {
	if text == "" {
		return nil
	}
	return []systemBlock{{Type: "text", Text: text, CacheControl: ephemeral}}
}

// markMessages puts a breakpoint on the last block of each of the
// messageBreakpoints newest user turns that end in a block able to carry
// one.
func markMessages(msgs []outMessage) {
	marked := 0
	for i := len(msgs) - 1; i >= 0 && marked < messageBreakpoints; i-- {
		if msgs[i].Role == "user" && markLast(msgs[i].Content) {
			marked++
		}
	}
}

// markLast sets a breakpoint on the last of content's blocks and reports
// whether that block can carry one. The builder made content for this
// request alone, so it is changed in place.
func markLast(content []any) bool {
	last := len(content) - 1
	if last < 0 {
		return false
	}
	switch b := content[last].(type) {
	case textBlock:
		b.CacheControl = ephemeral
		content[last] = b
	case imageBlock:
		b.CacheControl = ephemeral
		content[last] = b
	case toolResultBlock:
		b.CacheControl = ephemeral
		content[last] = b
	default:
		return false
	}
	return true
}
