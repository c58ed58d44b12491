package protocol_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"octet.dev/host/protocol"
	"octet.dev/host/spec/schema"
)

// tablesDoc is the document that holds the event and code tables.
const tablesDoc = "docs/protocol.md"

// docTable returns the first cells of the rows of the table under the
// heading of docs/protocol.md that starts with heading, each as the
// backquoted names it holds (a cell may name several codes).
func docTable(t *testing.T, heading string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("../" + tablesDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, heading) })
	if start < 0 {
		t.Fatalf("%s has no heading %q", tablesDoc, heading)
	}
	names := map[string]bool{}
	inTable := false
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "#") {
			break
		}
		if !strings.HasPrefix(l, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		first := strings.SplitN(strings.TrimPrefix(l, "|"), "|", 2)[0]
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(first, -1) {
			names[m[1]] = true
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: no table rows under %q", tablesDoc, heading)
	}
	return names
}

// constants returns the string constants of a file of this package whose
// names start with prefix, name → value.
func constants(t *testing.T, file, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s: %s is not a string literal", file, n.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				out[n.Name] = v
			}
		}
	}
	return out
}

// initialisms are the words Go spells in capitals.
var initialisms = map[string]string{"id": "ID", "io": "IO", "json": "JSON", "utf8": "UTF8", "url": "URL", "ms": "MS", "api": "API"}

// camel turns a snake_case value into its Go name: "invalid_utf8" →
// "InvalidUTF8".
func camel(v string) string {
	var b strings.Builder
	for _, w := range strings.Split(v, "_") {
		if up, ok := initialisms[w]; ok {
			b.WriteString(up)
		} else if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// eventChecks run for every event type of the registry.
var eventChecks = map[string]func(t *testing.T, e protocol.EventInfo, table map[string]bool){
	"payload": checkPayload,
	"doc row": checkDocRow,
	"schema":  checkSchema,
}

func checkPayload(t *testing.T, e protocol.EventInfo, _ map[string]bool) {
	if e.Payload == nil || e.Payload.Kind() != reflect.Struct || e.Payload.PkgPath() != "octet.dev/host/protocol" {
		t.Fatalf("payload %v is not a struct of package protocol", e.Payload)
	}
	v := protocol.PayloadFor(e.Type)
	if reflect.TypeOf(v) != reflect.PointerTo(e.Payload) {
		t.Errorf("PayloadFor = %T, want *%v", v, e.Payload)
	}
	if p1, p2 := protocol.PayloadFor(e.Type), protocol.PayloadFor(e.Type); e.Payload.Size() > 0 && p1 == p2 {
		t.Error("PayloadFor returns a shared value")
	}
	// Every field is named on the wire: a schema generator reads the tags.
	for i := range e.Payload.NumField() {
		f := e.Payload.Field(i)
		if tag := f.Tag.Get("json"); tag == "" || strings.HasPrefix(tag, ",") || tag == "-" {
			t.Errorf("field %s.%s has no JSON name", e.Payload.Name(), f.Name)
		}
	}
}

// schemaEvents maps each event type the JSON Schema of spec/schema defines
// (a definition whose type member is a const) to its definition's name,
// and lists the types #/$defs/Event accepts. The test imports spec/schema,
// which holds only the embedded document; protocol itself stays a leaf.
var schemaEvents = sync.OnceValues(func() (map[string]string, []string) {
	var doc struct {
		Defs map[string]struct {
			Properties struct {
				Type struct {
					Const *string  `json:"const"`
					Enum  []string `json:"enum"`
				} `json:"type"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schema.JSON(), &doc); err != nil {
		panic(err)
	}
	defs := map[string]string{}
	for name, d := range doc.Defs {
		if c := d.Properties.Type.Const; c != nil && strings.HasSuffix(name, "Event") {
			defs[*c] = name
		}
	}
	return defs, doc.Defs["Event"].Properties.Type.Enum
})

// checkSchema: a protocol-1 event type has a definition in the JSON Schema
// and is one of the types an event may carry (go generate ./spec/schema
// after adding a type).
func checkSchema(t *testing.T, e protocol.EventInfo, _ map[string]bool) {
	defs, types := schemaEvents()
	_, def := defs[string(e.Type)]
	listed := slices.Contains(types, string(e.Type))
	if !def || !listed {
		t.Errorf("the JSON Schema has no definition of %s (definition %v, in Event's types %v): run go generate ./spec/schema", e.Type, def, listed)
	}
}

func checkDocRow(t *testing.T, e protocol.EventInfo, table map[string]bool) {
	if !table[string(e.Type)] {
		t.Errorf("no row in the event table of %s (### Event types)", tablesDoc)
	}
}

// TestEventRegistry walks every event type: each Type constant is in the
// registry once, and each registry entry passes eventChecks.
func TestEventRegistry(t *testing.T) {
	consts := constants(t, "events.go", "Type")
	seen := map[protocol.EventType]bool{}
	for _, e := range protocol.Events() {
		if seen[e.Type] {
			t.Errorf("%s is registered twice", e.Type)
		}
		seen[e.Type] = true
		if consts["Type"+camel(string(e.Type))] != string(e.Type) {
			t.Errorf("%s has no constant Type%s", e.Type, camel(string(e.Type)))
		}
	}
	for name, v := range consts {
		if !seen[protocol.EventType(v)] {
			t.Errorf("%s = %q is not in the registry", name, v)
		}
	}
	table := docTable(t, "### Event types")
	for _, e := range protocol.Events() {
		for name, check := range eventChecks {
			t.Run(string(e.Type)+"/"+name, func(t *testing.T) { check(t, e, table) })
		}
	}
	for typ := range table {
		if !seen[protocol.EventType(typ)] {
			t.Errorf("the event table of %s lists %q, which the registry does not know", tablesDoc, typ)
		}
	}
	if v := protocol.PayloadFor("no_such_type"); v != nil {
		t.Errorf("PayloadFor(unknown) = %T, want nil", v)
	}
	if _, ok := protocol.Lookup("no_such_type"); ok {
		t.Error("Lookup(unknown) is ok")
	}
}

// TestEventKinds checks the registry's classification against the
// contract: 18 streaming types (CONTRACT §9) and the terminal types.
func TestEventKinds(t *testing.T) {
	if n := len(protocol.StreamingTypes()); n != 18 {
		t.Errorf("%d streaming types, CONTRACT §9 lists 18", n)
	}
	var terminal []protocol.EventType
	for _, e := range protocol.Events() {
		if e.Terminal {
			terminal = append(terminal, e.Type)
		}
	}
	if want := []protocol.EventType{"hello", "models", "shutdown", "protocol_error", "final_result"}; !slices.Equal(terminal, want) {
		t.Errorf("terminal types %v, want %v", terminal, want)
	}
	types := protocol.Types()
	types[0] = "changed"
	if protocol.Types()[0] == "changed" || protocol.Events()[0].Type == "changed" {
		t.Error("the registry hands out its own slice")
	}
}

// TestCodeNames checks every code constant's name against its value (Code
// + CamelCase), that no two constants share a value, that each code is in
// at least one place's list, and that each list matches its table in
// docs/protocol.md exactly.
func TestCodeNames(t *testing.T) {
	consts := constants(t, "codes.go", "Code")
	if len(consts) == 0 {
		t.Fatal("no code constants found")
	}
	byValue := map[string]string{}
	for name, v := range consts {
		if want := "Code" + camel(v); name != want {
			t.Errorf("%s = %q: the name should be %s", name, v, want)
		}
		if other, dup := byValue[v]; dup {
			t.Errorf("%s and %s both hold %q", name, other, v)
		}
		byValue[v] = name
	}
	places := []struct {
		heading string
		codes   []protocol.Code
	}{
		{"### Protocol error codes", protocol.ProtocolCodes()},
		{"### Run error codes", protocol.RunCodes()},
		{"### Tool error codes", protocol.ToolCodes()},
		{"### Policy denial codes", protocol.DenialCodes()},
		{"### Discovery issue codes", protocol.DiscoveryCodes()},
		{"### Extension notification codes", protocol.ExtensionCodes()},
		{"### Compaction error codes", protocol.CompactionCodes()},
	}
	listed := map[protocol.Code]bool{}
	for _, p := range places {
		table := docTable(t, p.heading)
		for _, c := range p.codes {
			listed[c] = true
			if byValue[string(c)] == "" {
				t.Errorf("%s: %q has no constant", p.heading, c)
			}
			if !table[string(c)] {
				t.Errorf("%s %s: no row for %q", tablesDoc, p.heading, c)
			}
		}
		for c := range table {
			if !slices.Contains(p.codes, protocol.Code(c)) {
				t.Errorf("%s %s lists %q, which is not one of its codes", tablesDoc, p.heading, c)
			}
		}
	}
	for v, name := range byValue {
		if !listed[protocol.Code(v)] {
			t.Errorf("%s = %q is in no place's list (ProtocolCodes, RunCodes, …)", name, v)
		}
	}
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{"invalid_utf8": "InvalidUTF8", "duplicate_request_id": "DuplicateRequestID", "io_error": "IOError", "canceled": "Canceled"} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunRequestTags checks that exactly the optional members of a run
// carry omitzero: an encoder then never writes an absent one (the host
// rejects null), and a schema generator sees which are required.
func TestRunRequestTags(t *testing.T) {
	required := map[string]bool{"run_id": true, "workspace": true, "model": true, "prompt": true}
	rt := reflect.TypeFor[protocol.RunRequest]()
	for i := range rt.NumField() {
		tag := strings.Split(rt.Field(i).Tag.Get("json"), ",")
		omit := len(tag) == 2 && tag[1] == "omitzero"
		if tag[0] == "" || omit == required[tag[0]] || len(tag) > 2 {
			t.Errorf("field %s: tag %q", rt.Field(i).Name, rt.Field(i).Tag.Get("json"))
		}
	}
}

var codeName = regexp.MustCompile(`^(Code|code|Deny|deny)[A-Z]`)

// TestCodesLiveHere fails when a package of the module defines an error
// code constant (a Code… or Deny… constant holding a string literal) or
// writes a bare literal as a Code field, instead of using this package's
// constants: a second definition is how names and values drifted apart
// before.
func TestCodesLiveHere(t *testing.T) {
	files := goSources(t, "..", "node_modules", ".git", "protocol")
	if len(files) < 50 {
		t.Fatalf("found only %d Go files above protocol/: wrong directory?", len(files))
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if kv, ok := n.(*ast.KeyValueExpr); ok {
				key, _ := kv.Key.(*ast.Ident)
				if lit, ok := kv.Value.(*ast.BasicLit); ok && key != nil && key.Name == "Code" && lit.Kind == token.STRING {
					t.Errorf("%s: Code: %s: a bare code literal; use the constant of package protocol", fset.Position(kv.Pos()), lit.Value)
				}
				return true
			}
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i >= len(vs.Values) || !codeName.MatchString(name.Name) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					t.Errorf("%s: %s = %s: define the code in package protocol and use it from there", fset.Position(name.Pos()), name.Name, lit.Value)
				}
			}
			return true
		})
	}
}

// TestRuntimeNamesNoCodeByLiteral fails when the runtime (the façade and
// every package under it) or a host (internal/host, the commands) writes an
// error code or an operation name as a string literal instead of naming
// this package's constant. Message texts are prose and may say "canceled"
// (a Message member or an assignment to a Message field), and JSON member
// names (struct tags) are not codes. A constant of another vocabulary that
// happens to spell a code (a provider's error type, a configuration
// file's member name) says so in its comment with the words "not a
// protocol code" (or "not protocol codes" above a group).
//
// The conformance kit (cmd/octet-conformance) is left out: it is a
// black-box oracle that restates the contract's codes on purpose, so that
// a value drifting in this package would fail it rather than move it too.
func TestRuntimeNamesNoCodeByLiteral(t *testing.T) {
	names := map[string]bool{}
	for _, l := range [][]protocol.Code{protocol.ProtocolCodes(), protocol.RunCodes(), protocol.ToolCodes(), protocol.DenialCodes(),
		protocol.CompactionCodes(), protocol.DiscoveryCodes(), protocol.ExtensionCodes()} {
		for _, c := range l {
			names[string(c)] = true
		}
	}
	for _, op := range []string{protocol.OperationLocalCompaction, protocol.OperationNativeCompaction, protocol.OperationTerminalGate} {
		names[op] = true
	}
	var files []string
	for _, dir := range []string{"../runtime", "../internal/host", "../cmd"} {
		files = append(files, goSources(t, dir, "octet-conformance")...)
	}
	if len(files) < 250 {
		t.Fatalf("found only %d files of the runtime and the hosts: wrong directory?", len(files))
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				n.Tag = nil // a JSON member name is not a code
			case *ast.KeyValueExpr:
				if key, ok := n.Key.(*ast.Ident); ok && key.Name == "Message" {
					return false
				}
			case *ast.AssignStmt:
				if len(n.Lhs) == len(n.Rhs) {
					for i, l := range n.Lhs {
						if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Message" {
							n.Rhs[i] = ast.NewIdent("_") // prose
						}
					}
				}
			case *ast.GenDecl:
				if n.Tok == token.CONST && otherVocabulary(n.Doc) {
					return false
				}
			case *ast.ValueSpec:
				if otherVocabulary(n.Doc) || otherVocabulary(n.Comment) {
					return false
				}
			case *ast.BasicLit:
				if v, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && names[v] {
					t.Errorf("%s: %s: name the constant of package protocol", fset.Position(n.Pos()), n.Value)
				}
			}
			return true
		})
	}
}

// notACode is how a constant's comment says its value belongs to another
// vocabulary and only happens to spell a protocol code.
var notACode = regexp.MustCompile(`\bnot\s+(a\s+protocol\s+code|protocol\s+codes)\b`)

func otherVocabulary(c *ast.CommentGroup) bool { return c != nil && notACode.MatchString(c.Text()) }

// goSources returns the non-test Go files under dir, every package below it
// included, testdata directories and the directories named skip left out.
func goSources(t *testing.T, dir string, skip ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || slices.Contains(skip, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
