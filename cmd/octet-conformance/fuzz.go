package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// fuzzCase is one generated request line and what must answer it. The
// kit sends each on one host, followed by a hello probe that must be
// answered too: the host keeps serving after every malformed line.
type fuzzCase struct {
	name     string
	contract bool
	rule     string
	line     []byte
	exp      expect
}

func (c fuzzCase) level() string {
	if c.contract {
		return "contract"
	}
	return "protocol"
}

// fuzzRule is the rule a generated line checks: framing (CONTRACT §3) for
// what is not one JSON object, the request rules (§4) for an object, and
// both for a well-formed line in an unusual shape.
func fuzzRule(kind, code string) string {
	switch {
	case kind != "protocol_error":
		return "CONTRACT §3, §4"
	case code == "invalid_utf8" || code == "invalid_json" || code == "not_an_object" || code == "frame_too_large":
		return "CONTRACT §3"
	}
	return "CONTRACT §4"
}

// member is one member of a request object, its value as JSON text.
type member struct{ name, value string }

// q is s as a JSON string.
func q(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func object(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(q(m.name))
		b.WriteByte(':')
		b.WriteString(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func envelope(id, command string) []member {
	return []member{{"protocol_version", "1"}, {"request_id", q(id)}, {"command", q(command)}}
}

// fuzzGen numbers request ids so that no line reuses one (a reused id is
// duplicate_request_id, not the fault under test).
type fuzzGen struct {
	n     int
	cases []fuzzCase
}

func (g *fuzzGen) id() string { g.n++; return fmt.Sprintf("fz-%d", g.n) }

func (g *fuzzGen) add(name string, line []byte, id *string, kind, code string) {
	g.cases = append(g.cases, fuzzCase{name: "fuzz/" + name, rule: fuzzRule(kind, code), line: line, exp: expect{id: id, kind: kind, code: code}})
}

// ours marks the case last added as a decision of this project's
// contract rather than of the protocol source.
func (g *fuzzGen) ours() { g.cases[len(g.cases)-1].contract = true }

func ptr(s string) *string { return &s }

// helloLine is a well-formed hello with id.
func helloLine(id string) []byte { return object(envelope(id, "hello")) }

// fixedFuzz are the hand-picked framing edges of CONTRACT §3 and §4.
func (g *fuzzGen) fixedFuzz() {
	// Invalid UTF-8, inside a string and between tokens.
	for _, bad := range []struct{ label, bytes string }{
		{"lone-ff", "\xff"}, {"overlong-slash", "\xc0\xaf"}, {"surrogate", "\xed\xa0\x80"},
		{"truncated-euro", "\xe2\x82"}, {"lone-continuation", "\x80"}, {"above-max", "\xf4\x90\x80\x80"},
	} {
		ms := append(envelope(g.id(), "hello"), member{"note", q("a") + ""})
		line := object(ms)
		line = bytes.Replace(line, []byte(`"a"`), []byte(`"a`+bad.bytes+`"`), 1)
		g.add("invalid_utf8/in-string-"+bad.label, line, nil, "protocol_error", "invalid_utf8")
	}
	g.add("invalid_utf8/between-tokens", append(append([]byte(`{"protocol_version":1,`), 0xfe), []byte(`"request_id":"`+g.id()+`","command":"hello"}`)...), nil, "protocol_error", "invalid_utf8")

	// Oversized lines: 1 MiB including the newline is the limit.
	g.add("oversized/1MiB-plus-1", bytes.Repeat([]byte("x"), maxFrame), nil, "protocol_error", "frame_too_large")
	g.add("oversized/3MiB", bytes.Repeat([]byte("y"), 3*maxFrame), nil, "protocol_error", "frame_too_large")
	id := g.id()
	g.add("oversized/valid-hello-1MiB-plus-1", pad(helloLine(id), maxFrame), nil, "protocol_error", "frame_too_large")
	id = g.id()
	g.add("oversized/valid-hello-exactly-1MiB", pad(helloLine(id), maxFrame-1), ptr(id), "hello", "")
	id = g.id()
	big := object(append(envelope(id, "hello"), member{"blob", q(strings.Repeat("z", maxFrame))}))
	g.add("oversized/huge-unknown-member", big, nil, "protocol_error", "frame_too_large")

	// Not an object.
	for _, v := range []struct{ label, text string }{
		{"array", `[1,2,3]`}, {"array-of-request", "[" + string(helloLine(g.id())) + "]"}, {"string", `"hello"`},
		{"number", `42`}, {"true", `true`}, {"null", `null`},
	} {
		g.add("not_an_object/"+v.label, []byte(v.text), nil, "protocol_error", "not_an_object")
	}

	// Invalid JSON.
	id = g.id()
	whole := string(helloLine(id))
	for _, v := range []struct{ label, text string }{
		{"not-json", "not json"}, {"open-brace", "{"}, {"trailing-comma", `{"protocol_version":1,}`},
		{"single-quotes", `{'protocol_version':1}`}, {"truncated", whole[:len(whole)/2]},
		{"extra-brace", whole + "}"}, {"trailing-object", whole + " {}"}, {"trailing-garbage", whole + "x"},
		{"bad-escape", `{"protocol_version":1,"request_id":"a\q","command":"hello"}`},
		{"deep-nesting", `{"protocol_version":1,"request_id":"x","command":"hello","a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}"},
	} {
		g.add("invalid_json/"+v.label, []byte(v.text), nil, "protocol_error", "invalid_json")
	}
	// RFC 8259 lets a parser ignore a byte order mark; this project does not.
	g.add("invalid_json/byte-order-mark", append([]byte("\ufeff"), helloLine(g.id())...), nil, "protocol_error", "invalid_json")
	g.ours()
	g.add("invalid_json/empty-line", nil, nil, "protocol_error", "invalid_json")
	g.ours()
	g.add("invalid_json/whitespace-line", []byte(" \t "), nil, "protocol_error", "invalid_json")
	g.ours()

	// Duplicate members.
	for _, name := range []string{"protocol_version", "command", "request_id"} {
		id := g.id()
		ms := envelope(id, "hello")
		for _, m := range ms {
			if m.name == name {
				ms = append(ms, m)
			}
		}
		var want *string
		if name != "request_id" {
			want = ptr(id)
		}
		g.add("duplicate_field/"+name, object(ms), want, "protocol_error", "duplicate_field")
	}
	id = g.id()
	g.add("duplicate_field/offline", object(append(envelope(id, "models"), member{"offline", "true"}, member{"offline", "true"})), ptr(id), "protocol_error", "duplicate_field")

	// Unknown members: other names, other letter cases.
	for _, name := range []string{"extra", "Command", "REQUEST_ID", "seq", "type", "data", "__proto__", "", "offline"} {
		id := g.id()
		label := name
		if label == "" {
			label = "empty-name"
		}
		g.add("unknown_field/"+label, object(append(envelope(id, "hello"), member{name, "true"})), ptr(id), "protocol_error", "unknown_field")
	}
	id = g.id()
	g.add("unknown_field/run-temperature", object(append(runMembers(id, "fr-t"), member{"temperature", "0"})), ptr(id), "protocol_error", "unknown_field")

	// Bad ids.
	for _, v := range []struct{ label, id string }{
		{"empty", ""}, {"129-bytes", strings.Repeat("a", 129)}, {"space", "a b"}, {"slash", "a/b"},
		{"non-ascii", "é"}, {"nul", "a\x00b"}, {"tab", "a\tb"},
	} {
		g.add("invalid_id/request_id-"+v.label, object(envelope(v.id, "hello")), nil, "protocol_error", "invalid_id")
	}
	for _, v := range []struct{ label, value string }{{"number", "5"}, {"null", "null"}, {"object", "{}"}, {"array", `["a"]`}, {"true", "true"}} {
		ms := envelope("", "hello")
		ms[1].value = v.value
		g.add("invalid_field/request_id-"+v.label, object(ms), nil, "protocol_error", "invalid_field")
	}
	id = g.id()
	g.add("invalid_id/run_id-slash", object(runMembers(id, "a/b")), ptr(id), "protocol_error", "invalid_id")
	id = g.id()
	g.add("invalid_id/session_id-dotdot-slash", object(append(runMembers(id, "fr-s"), member{"session_id", q("../x")})), ptr(id), "protocol_error", "invalid_id")
	id = g.id()
	id = strings.Repeat("b", 128-len(id)) + id
	g.add("valid/id-128-bytes", helloLine(id), ptr(id), "hello", "")
	id = g.id()
	g.add("valid/id-punctuation", helloLine("A-z_0.9:"+id), ptr("A-z_0.9:"+id), "hello", "")

	// The envelope's own members.
	for _, v := range []struct{ label, value, code string }{
		{"2", "2", "unsupported_protocol_version"}, {"0", "0", "unsupported_protocol_version"},
		{"string", `"1"`, "invalid_field"},
	} {
		id := g.id()
		ms := envelope(id, "hello")
		ms[0].value = v.value
		g.add("protocol_version/"+v.label, object(ms), ptr(id), "protocol_error", v.code)
	}
	id = g.id()
	g.add("missing_field/protocol_version", object(envelope(id, "hello")[1:]), ptr(id), "protocol_error", "missing_field")
	id = g.id()
	g.add("missing_field/command", object(envelope(id, "hello")[:2]), ptr(id), "protocol_error", "missing_field")
	g.add("missing_field/request_id", []byte(`{"protocol_version":1,"command":"hello"}`), nil, "protocol_error", "missing_field")
	id = g.id()
	g.add("missing_field/run_id", object(deleteMember(runMembers(id, "x"), "run_id")), ptr(id), "protocol_error", "missing_field")
	for _, cmd := range []string{"abort", "HELLO", "cancel"} {
		id := g.id()
		g.add("unknown_command/"+cmd, object(envelope(id, cmd)), ptr(id), "protocol_error", "unknown_command")
	}
	id = g.id()
	ms := envelope(id, "hello")
	ms[2].value = "5"
	g.add("invalid_field/command-number", object(ms), ptr(id), "protocol_error", "invalid_field")
	id = g.id()
	g.add("invalid_field/offline-string", object(append(envelope(id, "models"), member{"offline", q("yes")})), ptr(id), "protocol_error", "invalid_field")
	id = g.id()
	g.add("invalid_field/prompt-null", object(setMember(runMembers(id, "fr-p"), "prompt", "null")), ptr(id), "protocol_error", "invalid_field")
	id = g.id()
	g.add("invalid_field/max_steps-string", object(append(runMembers(id, "fr-m"), member{"max_steps", q("3")})), ptr(id), "protocol_error", "invalid_field")

	// A trailing carriage return is tolerated (CONTRACT §3, ours).
	id = g.id()
	g.add("valid/crlf", append(helloLine(id), '\r'), ptr(id), "hello", "")
	g.ours()
}

// runMembers is a well-formed run that every host refuses without I/O:
// its inline route's base_url is not http(s).
func runMembers(id, runID string) []member {
	return append(envelope(id, "run"),
		member{"run_id", q(runID)}, member{"workspace", q("/")}, member{"model", q("m")}, member{"prompt", q("p")},
		member{"provider", q("p")}, member{"base_url", q("ftp://127.0.0.1/v1")})
}

func deleteMember(ms []member, name string) []member {
	var out []member
	for _, m := range ms {
		if m.name != name {
			out = append(out, m)
		}
	}
	return out
}

func setMember(ms []member, name, value string) []member {
	out := append([]member(nil), ms...)
	for i := range out {
		if out[i].name == name {
			out[i].value = value
		}
	}
	return out
}

// pad inserts spaces before line's closing brace until it is n bytes.
func pad(line []byte, n int) []byte {
	if len(line) >= n {
		return line
	}
	out := make([]byte, 0, n)
	out = append(out, line[:len(line)-1]...)
	out = append(out, bytes.Repeat([]byte(" "), n-len(line))...)
	return append(out, '}')
}

// randomFuzz adds n mutants of well-formed requests, drawn from seed. Each
// mutation has a known answer: truncation is invalid_json, an invalid
// UTF-8 sequence is invalid_utf8, a repeated member duplicate_field, an
// added member unknown_field, a wrapped or replaced value not_an_object,
// a mangled request_id invalid_id; added whitespace and reordered members
// leave the request well-formed, so it gets its normal answer.
func (g *fuzzGen) randomFuzz(seed uint64, n int) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range n {
		id := g.id()
		var base []member
		var okKind, okCode string
		switch r.IntN(3) {
		case 0:
			base, okKind = envelope(id, "hello"), "hello"
		case 1:
			base, okKind = append(envelope(id, "models"), member{"offline", "true"}), "models"
		default:
			base, okKind, okCode = runMembers(id, "fr-"+id), "refused", "route_invalid"
		}
		line := object(base)
		name := fmt.Sprintf("random/%d-", i)
		switch k := r.IntN(8); k {
		case 0:
			g.add(name+"truncated", line[:1+r.IntN(len(line)-1)], nil, "protocol_error", "invalid_json")
		case 1:
			bad := [][]byte{{0xff}, {0xc3}, {0xed, 0xbf, 0xbf}, {0x80, 0x80}, {0xf8, 0x88, 0x80, 0x80, 0x80}}[r.IntN(5)]
			at := r.IntN(len(line) + 1)
			mut := append(append(append([]byte(nil), line[:at]...), bad...), line[at:]...)
			g.add(name+"invalid_utf8", mut, nil, "protocol_error", "invalid_utf8")
		case 2:
			m := base[r.IntN(len(base))]
			ms := append(append([]member(nil), base...), m)
			r.Shuffle(len(ms), func(a, b int) { ms[a], ms[b] = ms[b], ms[a] })
			var want *string
			if m.name != "request_id" {
				want = ptr(id)
			}
			g.add(name+"duplicate_"+m.name, object(ms), want, "protocol_error", "duplicate_field")
		case 3:
			ms := append(append([]member(nil), base...), member{"zz_" + randWord(r), randValue(r)})
			r.Shuffle(len(ms), func(a, b int) { ms[a], ms[b] = ms[b], ms[a] })
			g.add(name+"unknown_member", object(ms), ptr(id), "protocol_error", "unknown_field")
		case 4:
			var mut []byte
			if r.IntN(2) == 0 {
				mut = append(append([]byte("["), line...), ']')
			} else {
				mut = []byte([]string{`0`, `-1.5e3`, `false`, `null`, `"{}"`, `[]`}[r.IntN(6)])
			}
			g.add(name+"not_an_object", mut, nil, "protocol_error", "not_an_object")
		case 5:
			bad := randWord(r) + []string{"/", " ", "é", "\\", "@", "#"}[r.IntN(6)]
			if r.IntN(3) == 0 {
				bad = strings.Repeat("i", 129+r.IntN(200))
			}
			g.add(name+"bad_request_id", object(setMember(base, "request_id", q(bad))), nil, "protocol_error", "invalid_id")
		case 6:
			var b bytes.Buffer
			inString := false // the base requests' strings have no escapes
			for _, c := range line {
				b.WriteByte(c)
				if c == '"' {
					inString = !inString
				}
				if !inString && (c == ',' || c == ':' || c == '{') && r.IntN(2) == 0 {
					b.WriteString([]string{" ", "\t", "  \t "}[r.IntN(3)])
				}
			}
			g.add(name+"whitespace", b.Bytes(), ptr(id), okKind, okCode)
		default:
			ms := append([]member(nil), base...)
			r.Shuffle(len(ms), func(a, b int) { ms[a], ms[b] = ms[b], ms[a] })
			g.add(name+"reordered", object(ms), ptr(id), okKind, okCode)
		}
	}
}

func randWord(r *rand.Rand) string {
	b := make([]byte, 1+r.IntN(12))
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz_"[r.IntN(27)]
	}
	return string(b)
}

func randValue(r *rand.Rand) string {
	return []string{`1`, `"x"`, `null`, `true`, `[]`, `{"a":[1,{"b":null}]}`, `-0.5`, `"\u00e9\ud83d\ude00"`}[r.IntN(8)]
}

// fuzzCases returns the fixed cases then n random ones from seed.
func fuzzCases(seed uint64, n int) []fuzzCase {
	g := &fuzzGen{}
	g.fixedFuzz()
	g.randomFuzz(seed, n)
	return g.cases
}
