package fakeprovider

import (
	"fmt"
	"strconv"
)

// MaxCacheBreakpoints is the most cache_control breakpoints the Messages
// API accepts in one request; ModeAnthropic refuses a request with more.
const MaxCacheBreakpoints = 4

// checkCacheControl validates the prompt-cache breakpoints of a Messages
// request the way the API does:
//
//   - cache_control is null (no breakpoint) or an object with "type":
//     "ephemeral" and an optional "ttl" of "5m" or "1h", nothing else;
//   - it may sit on a tool, on a system text block (a string system prompt
//     has nowhere to put one), on a message content block other than
//     thinking and redacted_thinking, and at the top level (the automatic
//     breakpoint on the last cacheable block);
//   - at most MaxCacheBreakpoints of them, the top-level one included;
//   - in request order (tools, system, messages), a "1h" breakpoint may not
//     follow a "5m" one.
func checkCacheControl(body map[string]any) *apiError {
	fail := func(param, msg string) *apiError {
		e := invalidRequest(param, param+": "+msg)
		return &e
	}
	n, short := 0, false // breakpoints so far; whether one was 5m
	check := func(where string, v any) *apiError {
		if v == nil {
			return nil
		}
		cc, ok := v.(map[string]any)
		if !ok {
			return fail(where, "Input should be a valid dictionary or null")
		}
		for k := range cc {
			if k != "type" && k != "ttl" {
				return fail(where+"."+k, "Extra inputs are not permitted")
			}
		}
		if cc["type"] != "ephemeral" {
			return fail(where+".type", "Input should be 'ephemeral'")
		}
		ttl := "5m"
		if t, ok := cc["ttl"]; ok {
			if s, _ := t.(string); s == "5m" || s == "1h" {
				ttl = s
			} else {
				return fail(where+".ttl", "Input should be '5m' or '1h'")
			}
		}
		if ttl == "1h" && short {
			return fail(where, "a cache_control with ttl '1h' must come before any with ttl '5m' (in the order tools, system, messages)")
		}
		short = short || ttl == "5m"
		n++
		return nil
	}
	tools, _ := body["tools"].([]any)
	for i, t := range tools {
		if m, ok := t.(map[string]any); ok {
			if e := check("tools."+strconv.Itoa(i)+".cache_control", m["cache_control"]); e != nil {
				return e
			}
		}
	}
	system, _ := body["system"].([]any)
	for i, b := range system {
		if m, ok := b.(map[string]any); ok {
			if e := check("system."+strconv.Itoa(i)+".cache_control", m["cache_control"]); e != nil {
				return e
			}
		}
	}
	msgs, _ := body["messages"].([]any)
	for i, msg := range msgs {
		m, _ := msg.(map[string]any)
		content, _ := m["content"].([]any)
		for j, b := range content {
			blk, ok := b.(map[string]any)
			if !ok {
				continue
			}
			cc, has := blk["cache_control"]
			if !has {
				continue
			}
			where := "messages." + strconv.Itoa(i) + ".content." + strconv.Itoa(j)
			if typ, _ := blk["type"].(string); typ == "thinking" || typ == "redacted_thinking" {
				return fail(where+"."+typ+".cache_control", "Extra inputs are not permitted")
			}
			if e := check(where+".cache_control", cc); e != nil {
				return e
			}
		}
	}
	if e := check("cache_control", body["cache_control"]); e != nil {
		return e
	}
	if n > MaxCacheBreakpoints {
		e := invalidRequest("", fmt.Sprintf("A maximum of %d blocks with cache_control may be provided. Found %d.", MaxCacheBreakpoints, n))
		return &e
	}
	return nil
}
