package chat

import "octet.dev/host/runtime/internal/provider/edge"

// The fast path decodes the common chunk shapes — text, refusal and
// reasoning deltas, finish chunks, with any unknown members — without
// reflection, on edge.Scanner. It either produces exactly the chunk that
// json.Unmarshal with unmarshalOpts would produce, or it declines and the
// caller falls back to json.Unmarshal, which then decides (and reports
// errors). Tool-call deltas, usage and error objects, escaped names, lone
// surrogate escapes, invalid UTF-8 and duplicate known members all decline.
// FuzzFastPath checks the equivalence.

// parseChunkFast decodes data into c, reporting false when it declines.
// c may be partly written when it declines; the caller resets it. The
// delta texts are made in strs (nil: ordinary strings).
func parseChunkFast(data []byte, c *chunk, strs *edge.Strings) bool {
	s := edge.NewScanner(data)
	c.Choices, c.Usage, c.Error = c.Choices[:0], nil, nil
	if !s.Consume('{') {
		return false
	}
	if !s.Consume('}') {
		var seen edge.Seen
		for {
			name, ok := s.Name()
			if !ok {
				return false
			}
			switch string(name) {
			case "choices":
				ok = seen.First(1) && scanChoices(&s, c, strs)
			case "usage":
				ok = seen.First(2) && s.Null()
			case "error":
				ok = seen.First(4) && s.Null()
			default:
				ok = s.Skip()
			}
			if !ok {
				return false
			}
			if s.Consume(',') {
				continue
			}
			if s.Consume('}') {
				break
			}
			return false
		}
	}
	return s.AtEnd()
}

func scanChoices(s *edge.Scanner, c *chunk, strs *edge.Strings) bool {
	if s.Null() {
		c.Choices = nil
		return true
	}
	if !s.Consume('[') {
		return false
	}
	if s.Consume(']') {
		return true
	}
	for {
		n := len(c.Choices)
		if n < cap(c.Choices) {
			c.Choices = c.Choices[:n+1]
			c.Choices[n] = choice{}
		} else {
			c.Choices = append(c.Choices, choice{})
		}
		if !scanChoice(s, &c.Choices[n], strs) {
			return false
		}
		if s.Consume(',') {
			continue
		}
		return s.Consume(']')
	}
}

func scanChoice(s *edge.Scanner, ch *choice, strs *edge.Strings) bool {
	if !s.Consume('{') {
		return false
	}
	if s.Consume('}') {
		return true
	}
	var seen edge.Seen
	for {
		name, ok := s.Name()
		if !ok {
			return false
		}
		switch string(name) {
		case "index":
			ok = seen.First(1) && s.IntOrNull(&ch.Index)
		case "delta":
			ok = seen.First(2) && scanDelta(s, &ch.Delta, strs)
		case "finish_reason":
			ok = seen.First(4) && s.StringOrNull(&ch.FinishReason)
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
		if s.Consume(',') {
			continue
		}
		return s.Consume('}')
	}
}

func scanDelta(s *edge.Scanner, d *delta, strs *edge.Strings) bool {
	if s.Null() {
		return true
	}
	if !s.Consume('{') {
		return false
	}
	if s.Consume('}') {
		return true
	}
	var seen edge.Seen
	for {
		name, ok := s.Name()
		if !ok {
			return false
		}
		switch string(name) {
		case "content":
			ok = seen.First(1) && s.StringOrNullIn(&d.Content, strs)
		case "refusal":
			ok = seen.First(2) && s.StringOrNullIn(&d.Refusal, strs)
		case "reasoning_content":
			ok = seen.First(4) && s.StringOrNullIn(&d.ReasoningContent, strs)
		case "reasoning":
			var r string
			ok = seen.First(8) && s.StringOrNull(&r)
			d.Reasoning = edge.TextOnly(r)
		case "tool_calls":
			ok = seen.First(16) && s.Null()
		case "audio":
			// Audio output (a transcript or base64 data): the slow path.
			ok = seen.First(32) && s.Null()
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
		if s.Consume(',') {
			continue
		}
		return s.Consume('}')
	}
}
