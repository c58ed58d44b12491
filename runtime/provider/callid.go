package provider

import "strconv"

// MaxCallIDBytes bounds a tool-call id the host keeps or sends. OpenAI Chat
// Completions refuses ids over 40 bytes, so the chat wire sends at most
// that (see CallIDRule); the other wires take up to this.
const MaxCallIDBytes = 64

// CallIDRule is a wire's rule for tool-call ids: 1..MaxLen bytes of ASCII
// letters, digits, '_' and '-' (Anthropic requires ^[a-zA-Z0-9_-]+$; the
// OpenAI wires accept these), the shape every host id has.
type CallIDRule struct{ MaxLen int }

// The rules of the wires.
var (
	// HostCallIDs is the rule of the ids the host keeps in history: the
	// strictest character set, and the longest the wires other than Chat
	// Completions accept.
	HostCallIDs = CallIDRule{MaxLen: MaxCallIDBytes}
	// ChatCallIDs is Chat Completions' rule (ids up to 40 bytes).
	ChatCallIDs = CallIDRule{MaxLen: 40}
)

// Valid reports whether id follows the rule.
func (r CallIDRule) Valid(id string) bool {
	if id == "" || len(id) > r.MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AssignCallIDs gives each of a step's calls an id that is well-formed
// (HostCallIDs) and unique in the conversation: the provider's own when it
// is both, else the host's "call_<step>_<index>" (index from 0 in the
// step), with "_<n>" appended when even that is taken. used holds the ids
// of the conversation so far; the assigned ids are added to it.
func AssignCallIDs(calls []ToolCall, step int, used map[string]bool) {
	for i := range calls {
		id := calls[i].ID
		if !HostCallIDs.Valid(id) || used[id] {
			id = freshCallID("call_"+strconv.Itoa(step)+"_"+strconv.Itoa(i), used)
		}
		calls[i].ID = id
		used[id] = true
	}
}

// CallIDs returns the set of the tool-call ids in msgs.
func CallIDs(msgs []Message) map[string]bool {
	used := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			used[tc.ID] = true
		}
	}
	return used
}

// UniqueCallIDs returns msgs with every tool call's id valid under rule and
// unique, for a request builder: a history written before the host
// assigned ids (or an embedder's) may repeat an id or carry one the wire
// refuses. A call that needs a new id gets "call_h<message>_<index>"; the
// tool results that answer it, the following ones with its old id in
// order, get the same. msgs itself is never modified: the result shares it
// when nothing changes, and is a copy otherwise.
func UniqueCallIDs(msgs []Message, rule CallIDRule) []Message {
	if callIDsOK(msgs, rule) {
		return msgs
	}
	out := make([]Message, len(msgs))
	copy(out, msgs)
	used := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if rule.Valid(tc.ID) {
				used[tc.ID] = true
			}
		}
	}
	kept := map[string]bool{} // valid ids already given to a call
	var answer map[string][]string
	for i := range out {
		m := &out[i]
		switch {
		case len(m.ToolCalls) > 0:
			answer = map[string][]string{}
			calls := make([]ToolCall, len(m.ToolCalls))
			copy(calls, m.ToolCalls)
			for j := range calls {
				old, id := calls[j].ID, calls[j].ID
				if !rule.Valid(id) || kept[id] {
					id = freshCallID("call_h"+strconv.Itoa(i)+"_"+strconv.Itoa(j), used)
					used[id] = true
				}
				kept[id] = true
				calls[j].ID = id
				answer[old] = append(answer[old], id)
			}
			m.ToolCalls = calls
		case m.Role == RoleTool:
			if ids := answer[m.ToolCallID]; len(ids) > 0 {
				m.ToolCallID, answer[m.ToolCallID] = ids[0], ids[1:]
			}
		}
	}
	return out
}

// callIDsOK reports whether every call id in msgs is valid and unique.
func callIDsOK(msgs []Message, rule CallIDRule) bool {
	var seen map[string]bool
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if !rule.Valid(tc.ID) || seen[tc.ID] {
				return false
			}
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[tc.ID] = true
		}
	}
	return true
}

func freshCallID(base string, used map[string]bool) string {
	id := base
	for n := 2; used[id]; n++ {
		id = base + "_" + strconv.Itoa(n)
	}
	return id
}
