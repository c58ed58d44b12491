package store

import "octet.dev/host/runtime/provider"

// The conversions between the record types of the file format (format.go)
// and the provider's types the agent loop speaks. They are written out
// member by member on purpose: neither side follows the other's JSON tags
// or field order, and a field added to one side compiles without the other
// until a conversion maps it (TestConvertCoversProvider fails for a
// provider field that is neither mapped nor listed as never stored).

// NewMessageV1 returns the record form of m. NewTurn and NativeItems are not
// stored (see MessageV1), nor are Media.Data and ToolCall.ArgumentsDropped.
// The slices are new; the strings are shared.
func NewMessageV1(m provider.Message) MessageV1 {
	out := MessageV1{
		Role:            string(m.Role),
		Text:            m.Text,
		Reasoning:       m.Reasoning,
		ToolCallID:      m.ToolCallID,
		ToolName:        m.ToolName,
		IsError:         m.IsError,
		ReasoningEffort: m.ReasoningEffort,
	}
	if m.ReasoningBlocks != nil {
		out.ReasoningBlocks = make([]ReasoningBlockV1, len(m.ReasoningBlocks))
		for i, b := range m.ReasoningBlocks {
			out.ReasoningBlocks[i] = ReasoningBlockV1{
				Text:           b.Text,
				Signature:      b.Signature,
				ID:             b.ID,
				Redacted:       b.Redacted,
				AfterToolCalls: b.AfterToolCalls,
				Wire:           b.Wire,
				Model:          b.Model,
			}
		}
	}
	out.Media = newMediaV1(m.Media)
	out.OutputMedia = newMediaV1(m.OutputMedia)
	if m.ToolCalls != nil {
		out.ToolCalls = make([]ToolCallV1, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			out.ToolCalls[i] = ToolCallV1{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		}
	}
	return out
}

func newMediaV1(ms []provider.Media) []MediaV1 {
	if ms == nil {
		return nil
	}
	out := make([]MediaV1, len(ms))
	for i, m := range ms {
		out[i] = MediaV1{Type: m.Type, MIMEType: m.MIMEType, Format: m.Format, SHA256: m.SHA256, Bytes: m.Bytes}
	}
	return out
}

// Provider returns m as the provider's message, with new slices (the
// strings are shared).
func (m *MessageV1) Provider() provider.Message {
	var sl slabs
	sl.reserve(m)
	sl.alloc()
	return sl.message(m)
}

// slabs converts many messages with one allocation per kind of slice: the
// conversation is converted on every call, and its size must not decide
// how many allocations that takes. Call reserve for each message, then
// alloc, then message for each message.
type slabs struct {
	blocks []provider.ReasoningBlock
	media  []provider.Media
	calls  []provider.ToolCall
	nb     int
	nm     int
	nc     int
}

func (s *slabs) reserve(m *MessageV1) {
	s.nb += len(m.ReasoningBlocks)
	s.nm += len(m.Media) + len(m.OutputMedia)
	s.nc += len(m.ToolCalls)
}

func (s *slabs) alloc() {
	if s.nb > 0 {
		s.blocks = make([]provider.ReasoningBlock, 0, s.nb)
	}
	if s.nm > 0 {
		s.media = make([]provider.Media, 0, s.nm)
	}
	if s.nc > 0 {
		s.calls = make([]provider.ToolCall, 0, s.nc)
	}
}

// message converts m, which reserve counted, into slices of the slabs. Each
// slice is capped at its length, so appending to it never writes into the
// next message's.
func (s *slabs) message(m *MessageV1) provider.Message {
	out := provider.Message{
		Role:            provider.Role(m.Role),
		Text:            m.Text,
		Reasoning:       m.Reasoning,
		ToolCallID:      m.ToolCallID,
		ToolName:        m.ToolName,
		IsError:         m.IsError,
		ReasoningEffort: m.ReasoningEffort,
	}
	if m.ReasoningBlocks != nil {
		start := len(s.blocks)
		for _, b := range m.ReasoningBlocks {
			s.blocks = append(s.blocks, provider.ReasoningBlock{
				Text:           b.Text,
				Signature:      b.Signature,
				ID:             b.ID,
				Redacted:       b.Redacted,
				AfterToolCalls: b.AfterToolCalls,
				Wire:           b.Wire,
				Model:          b.Model,
			})
		}
		out.ReasoningBlocks = nonNil(s.blocks[start:len(s.blocks):len(s.blocks)])
	}
	out.Media = s.mediaOf(m.Media)
	out.OutputMedia = s.mediaOf(m.OutputMedia)
	if m.ToolCalls != nil {
		start := len(s.calls)
		for _, c := range m.ToolCalls {
			s.calls = append(s.calls, provider.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		out.ToolCalls = nonNil(s.calls[start:len(s.calls):len(s.calls)])
	}
	return out
}

func (s *slabs) mediaOf(ms []MediaV1) []provider.Media {
	if ms == nil {
		return nil
	}
	start := len(s.media)
	for _, m := range ms {
		s.media = append(s.media, provider.Media{Type: m.Type, MIMEType: m.MIMEType, Format: m.Format, SHA256: m.SHA256, Bytes: m.Bytes})
	}
	return nonNil(s.media[start:len(s.media):len(s.media)])
}

// nonNil keeps an empty slice empty rather than nil (a record may hold an
// empty list), without allocating.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// NewUsageV1 returns the record form of u.
func NewUsageV1(u provider.Usage) UsageV1 {
	return UsageV1{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens,
		TotalTokens:      u.TotalTokens,
	}
}

// Provider returns u as the provider's usage.
func (u UsageV1) Provider() provider.Usage {
	return provider.Usage{
		InputTokens:      u.InputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens,
		TotalTokens:      u.TotalTokens,
	}
}
