package generate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"

	"octet.dev/host/protocol"
)

// SchemaID is the $id of the schema document.
const SchemaID = "https://octet.dev/host/spec/schema/protocol-1.schema.json"

// IDPattern is CONTRACT §4's rule for request, run and session IDs, as
// wire.ValidID checks it: 1..128 bytes of ASCII letters, digits, '-', '_',
// '.', ':'.
const IDPattern = "^[A-Za-z0-9._:-]{1,128}$"

// MaxMessageBytes bounds an error message (CONTRACT §5). JSON Schema counts
// characters, not bytes, so maxLength is a looser form of the same bound.
const maxMessageChars = 1024

const pkgPath = "octet.dev/host/protocol"

// gen holds the definitions being built and the Go type of each struct
// definition the reflector named.
type gen struct {
	r     *jsonschema.Reflector
	defs  jsonschema.Definitions
	types map[string]reflect.Type
}

// Generate returns the schema document, indented, with a final newline.
// protocolDir is the directory of package protocol's sources.
func Generate(protocolDir string) ([]byte, error) {
	comments, err := docComments(protocolDir)
	if err != nil {
		return nil, err
	}
	g := &gen{defs: jsonschema.Definitions{}, types: map[string]reflect.Type{}}
	g.r = &jsonschema.Reflector{
		// Events are open: clients must tolerate members added later
		// (the requests are closed below).
		AllowAdditionalProperties: true,
		Anonymous:                 true,
		CommentMap:                comments,
		Namer:                     g.name,
		Mapper:                    mapType,
	}

	for _, e := range protocol.Events() {
		g.reflect(e.Payload)
	}
	g.reflect(reflect.TypeFor[protocol.ModelsRequest]())
	g.reflect(reflect.TypeFor[protocol.RunRequest]())
	if err := g.nullable(); err != nil {
		return nil, err
	}
	if err := g.enums(); err != nil {
		return nil, err
	}
	if err := g.requests(); err != nil {
		return nil, err
	}
	g.events()

	root := &jsonschema.Schema{
		Version:     jsonschema.Version,
		ID:          jsonschema.ID(SchemaID),
		Title:       "native-host protocol 1",
		Description: "Every frame of native-host protocol 1 as octet-host speaks it: a request (#/$defs/Request) or an event (#/$defs/Event). Requests are closed (no unknown member, no null); events are open, since clients must tolerate members added later. Generated from the Go package octet.dev/host/protocol by go generate ./spec/schema: do not edit.",
		AnyOf:       []*jsonschema.Schema{ref("Request"), ref("Event")},
		Definitions: g.defs,
	}
	raw, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	// encoding/json escapes <, > and & in strings; the descriptions read
	// better without, and the text stays the same JSON.
	raw = []byte(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(raw)))
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// name names a definition: the Go type name, with a generic type's
// argument folded in (PolicyValue[bool] is PolicyValueBool).
func (g *gen) name(t reflect.Type) string {
	n := t.Name()
	if i := strings.IndexByte(n, '['); i >= 0 {
		arg := n[i+1 : len(n)-1]
		arg = arg[strings.LastIndexByte(arg, '.')+1:]
		n = n[:i] + strings.ToUpper(arg[:1]) + arg[1:]
	}
	if t.Kind() == reflect.Struct && t.PkgPath() == pkgPath {
		g.types[n] = t
	}
	return n
}

// mapType gives the reflector the types it would get wrong: a
// jsontext.Value (tool_start.data.arguments) is raw JSON, not base64.
func mapType(t reflect.Type) *jsonschema.Schema {
	if t == reflect.TypeFor[jsontext.Value]() {
		return &jsonschema.Schema{
			Description: "The JSON object the model sent, or a string holding its raw text when that is not an object.",
			OneOf:       []*jsonschema.Schema{{Type: "object"}, {Type: "string"}},
		}
	}
	return nil
}

// reflect adds t's definition and those of the types it uses.
func (g *gen) reflect(t reflect.Type) {
	s := g.r.ReflectFromType(t)
	for k, v := range s.Definitions {
		g.defs[k] = v
	}
}

func ref(name string) *jsonschema.Schema { return &jsonschema.Schema{Ref: "#/$defs/" + name} }

// prop returns property p of definition def, failing loudly when the
// vocabulary changed under the generator.
func (g *gen) prop(def, p string) (*jsonschema.Schema, error) {
	d, ok := g.defs[def]
	if !ok {
		return nil, fmt.Errorf("no definition %s", def)
	}
	s, ok := d.Properties.Get(p)
	if !ok {
		return nil, fmt.Errorf("definition %s has no property %s", def, p)
	}
	return s, nil
}

// nullable marks the members that are always present but may be null: a
// pointer field without omitempty or omitzero (final_result.error,
// sessionFile, tool_finish.error, …). A pointer field with one of them is
// optional and never null when present. Slices and maps are never null:
// the encoder writes a nil one as [] or {}.
func (g *gen) nullable() error {
	for name, t := range g.types {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Type.Kind() != reflect.Pointer {
				continue
			}
			wire, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") {
				continue
			}
			s, err := g.prop(name, wire)
			if err != nil {
				return err
			}
			inner := *s
			inner.Description = ""
			*s = jsonschema.Schema{Description: s.Description, AnyOf: []*jsonschema.Schema{&inner, {Type: "null"}}}
		}
	}
	return nil
}

func strs[T ~string](vs ...T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// enums puts the vocabulary's enumerations and code lists on the members
// that carry them.
func (g *gen) enums() error {
	set := []struct {
		def, prop string
		enum      []any
	}{
		{"Settled", "status", strs(protocol.Statuses()...)},
		{"FinalResult", "status", strs(protocol.Statuses()...)},
		{"ModelDelta", "channel", strs(protocol.ChannelText, protocol.ChannelReasoning)},
		{"SteeringDelivered", "mode", strs(protocol.SteeringModeQueued, protocol.SteeringModeNative)},
		{"OutputMedia", "type", strs(protocol.MediaImage, protocol.MediaAudio)},
		{"ProviderLifecycle", "state", strs(protocol.LifecycleQueued, protocol.LifecycleLoading, protocol.LifecycleReady)},
		{"ProviderOperationRetry", "operation", strs(protocol.OperationLocalCompaction, protocol.OperationNativeCompaction, protocol.OperationTerminalGate)},
		{"ToolProgress", "stream", strs(protocol.StreamStdout, protocol.StreamStderr)},
		{"ExtensionNotification", "level", strs(protocol.LevelInfo, protocol.LevelWarning, protocol.LevelError)},
		{"ExtensionNotification", "code", strs(protocol.ExtensionCodes()...)},
		{"DiscoveryIssue", "code", strs(protocol.DiscoveryCodes()...)},
		{"ModelInfo", "provider_mode", strs(protocol.ModeOpenAICompatible, protocol.ModeOpenAIResponses, protocol.ModeAnthropicMessages)},
		{"Hello", "commands", nil}, // items, below
		{"ToolDecision", "effect", strs(protocol.EffectPure, protocol.EffectWorkspaceRead, protocol.EffectWorkspaceMutation, protocol.EffectProcess, protocol.EffectNetwork, protocol.EffectDelegation, protocol.EffectUnknown)},
		{"ToolDecision", "authorization", strs(protocol.AuthControlledRead, protocol.AuthPure, protocol.AuthHostRequest, protocol.AuthOperator)},
		{"ToolDecision", "denial_code", strs(protocol.DenialCodes()...)},
		{"ShellSelection", "selection", strs(protocol.ShellConfigured, protocol.ShellSystemBash, protocol.ShellPathBash, protocol.ShellShFallback, protocol.ShellUnavailable)},
	}
	for _, e := range set {
		s, err := g.prop(e.def, e.prop)
		if err != nil {
			return err
		}
		if e.enum == nil {
			s.Items.Enum = strs(protocol.Commands()...)
			continue
		}
		s.Enum = e.enum
	}
	// Every PolicyValue carries a source.
	sources := strs(protocol.SourceDefault, protocol.SourceConfig, protocol.SourceEnvironment, protocol.SourceCLI, protocol.SourceHostRequest)
	for name := range g.defs {
		if strings.HasPrefix(name, "PolicyValue") {
			s, err := g.prop(name, "source")
			if err != nil {
				return err
			}
			s.Enum = sources
		}
	}
	// The one effect policy.
	ep, err := g.prop("EffectivePolicy", "effect_policy")
	if err != nil {
		return err
	}
	*ep = jsonschema.Schema{Description: ep.Description, AllOf: []*jsonschema.Schema{{Ref: ep.Ref}, {Properties: props("value", &jsonschema.Schema{Const: protocol.EffectPolicyControlled})}}}
	// Hello's fixed values.
	for p, v := range map[string]any{"protocol_version": protocol.Version, "max_frame_bytes": protocol.MaxFrameBytes} {
		s, err := g.prop("Hello", p)
		if err != nil {
			return err
		}
		s.Const = v
	}

	// ErrorData is one shape with a code list per place (CONTRACT §5).
	msg, err := g.prop("ErrorData", "message")
	if err != nil {
		return err
	}
	msg.MaxLength = uint64p(maxMessageChars)
	coded := func(name, desc string, codes []protocol.Code) *jsonschema.Schema {
		g.defs[name] = &jsonschema.Schema{
			Description: desc,
			AllOf:       []*jsonschema.Schema{ref("ErrorData"), {Properties: props("code", &jsonschema.Schema{Enum: strs(codes...)})}},
		}
		return ref(name)
	}
	coded("ProtocolError", "The data of protocol_error: a protocol error code.", protocol.ProtocolCodes())
	runErr := coded("RunError", "final_result.data.error: a run error code.", protocol.RunCodes())
	toolErr := coded("ToolError", "tool_finish.data.error: a tool error code (a denied call finishes with its denial code).", protocol.ToolCodes())
	for _, e := range []struct {
		def string
		err *jsonschema.Schema
	}{{"FinalResult", runErr}, {"ToolFinish", toolErr}} {
		s, err := g.prop(e.def, "error")
		if err != nil {
			return err
		}
		if len(s.AnyOf) != 2 || s.AnyOf[0].Ref != "#/$defs/ErrorData" {
			return fmt.Errorf("%s.error is not a nullable ErrorData", e.def)
		}
		s.AnyOf[0] = e.err
	}
	return nil
}

func uint64p(n uint64) *uint64 { return &n }

func props(kv ...any) *orderedmap.OrderedMap[string, *jsonschema.Schema] {
	p := jsonschema.NewProperties()
	for i := 0; i < len(kv); i += 2 {
		p.Set(kv[i].(string), kv[i+1].(*jsonschema.Schema))
	}
	return p
}

func idString(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: IDPattern, Description: desc}
}

// close makes a definition strict, as the wire codec decodes requests: no
// member it does not define.
func (g *gen) close(name string) error {
	d, ok := g.defs[name]
	if !ok {
		return fmt.Errorf("no definition %s", name)
	}
	d.AdditionalProperties = jsonschema.FalseSchema
	return nil
}

// requests builds one closed definition per command: the envelope
// (protocol_version, request_id, command) merged with the command's body,
// as wire.Decode reads a line (CONTRACT §3–§5). A request never carries
// null: optional members are absent or of their type. The rules a schema
// cannot state stay the codec's: exact-case names, no duplicate member, the
// 1 MiB frame bound, request_id unique per host process, and
// protocol_version written as the number 1 exactly (1.0 is refused).
func (g *gen) requests() error {
	for _, n := range []string{"Media", "HistoryMessage", "Reasoning"} {
		if err := g.close(n); err != nil {
			return err
		}
	}
	envelope := func(command, desc string, body *jsonschema.Schema) *jsonschema.Schema {
		s := &jsonschema.Schema{
			Type:        "object",
			Description: desc,
			Properties: props(
				"protocol_version", &jsonschema.Schema{Const: protocol.Version, Description: "The protocol version: the number 1."},
				"request_id", idString("The request's ID, unique per host process: 1..128 bytes of ASCII letters, digits, '-', '_', '.', ':'."),
				"command", &jsonschema.Schema{Const: command},
			),
			Required:             []string{"protocol_version", "request_id", "command"},
			AdditionalProperties: jsonschema.FalseSchema,
		}
		if body != nil {
			for p := body.Properties.Oldest(); p != nil; p = p.Next() {
				s.Properties.Set(p.Key, p.Value)
			}
			s.Required = append(s.Required, body.Required...)
		}
		return s
	}
	models, run := g.defs["ModelsRequest"], g.defs["RunRequest"]
	if models == nil || run == nil {
		return fmt.Errorf("the request bodies were not reflected")
	}
	for _, id := range []string{"run_id", "session_id"} {
		s, err := g.prop("RunRequest", id)
		if err != nil {
			return err
		}
		s.Type, s.Pattern = "string", IDPattern
	}
	g.defs["HelloRequest"] = envelope(protocol.CommandHello, "The hello command (CONTRACT §6): the host's versions, bounds, commands and features.", nil)
	g.defs["ModelsRequest"] = envelope(protocol.CommandModels, "The models command (CONTRACT §7): the model inventory; offline suppresses live discovery.", models)
	g.defs["RunRequest"] = envelope(protocol.CommandRun, "The run command (CONTRACT §8). Only the shape is the schema's: a well-formed run whose values fail validation ends in a final_result error, not a protocol_error.", run)
	g.defs["ShutdownRequest"] = envelope(protocol.CommandShutdown, "The shutdown command (CONTRACT §2): answered, then the host exits 0.", nil)

	req := &jsonschema.Schema{
		Description: "One request line: a JSON object whose command selects its members.",
		Type:        "object",
		Required:    []string{"command"},
		Properties:  props("command", &jsonschema.Schema{Enum: strs(protocol.Commands()...)}),
	}
	for _, c := range protocol.Commands() {
		req.AllOf = append(req.AllOf, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: props("command", &jsonschema.Schema{Const: c}), Required: []string{"command"}},
			Then: ref(camel(c) + "Request"),
		})
	}
	g.defs["Request"] = req
	return nil
}

// camel turns a snake_case name into CamelCase: "protocol_error" →
// "ProtocolError".
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// EventDef names the definition of an event type's whole frame:
// "model_delta" → "ModelDeltaEvent".
func EventDef(typ string) string { return camel(typ) + "Event" }

// events builds the event envelope (CONTRACT §5), one definition per event
// type tying type to its data, and Event, which picks the definition by
// type.
func (g *gen) events() {
	g.defs["EventEnvelope"] = &jsonschema.Schema{
		Type:        "object",
		Description: "The members every event carries. run_id and session_id are present on run events only.",
		Properties: props(
			"protocol_version", &jsonschema.Schema{Const: protocol.Version},
			"request_id", &jsonschema.Schema{
				Description: "The ID of the request this event answers, or null for a protocol_error about a line that yielded no valid ID.",
				AnyOf:       []*jsonschema.Schema{idString(""), {Type: "null"}},
			},
			"seq", &jsonschema.Schema{Type: "integer", Minimum: "1", Description: "1 for a request's first event, then gapless per request."},
			"type", &jsonschema.Schema{Type: "string", Description: "The event type; it selects the shape of data."},
			"run_id", idString("The run's ID (run events only)."),
			"session_id", idString("The run's session ID (run events only)."),
			"data", &jsonschema.Schema{Description: "The payload, of the type's shape."},
		),
		Required: []string{"protocol_version", "request_id", "seq", "type", "data"},
	}
	ev := &jsonschema.Schema{
		Description: "One event line. Its data has the shape of its type.",
		AllOf:       []*jsonschema.Schema{ref("EventEnvelope")},
		Properties:  props("type", &jsonschema.Schema{Enum: strs(protocol.Types()...)}),
	}
	for _, e := range protocol.Events() {
		data := ref(g.name(e.Payload))
		switch e.Type {
		case protocol.TypeProtocolError:
			data = ref("ProtocolError")
		}
		desc := fmt.Sprintf("An event of type %s (%s", e.Type, e.Kind)
		if e.Terminal {
			desc += ", terminal"
		}
		switch e.Emitted {
		case protocol.EmittedGoAPI:
			desc += "; emitted by Go API runs only"
		case protocol.NotEmitted:
			desc += "; not emitted by this build"
		}
		desc += ")."
		g.defs[EventDef(string(e.Type))] = &jsonschema.Schema{
			Description: desc,
			AllOf:       []*jsonschema.Schema{ref("EventEnvelope")},
			Properties:  props("type", &jsonschema.Schema{Const: string(e.Type)}, "data", data),
		}
		ev.AllOf = append(ev.AllOf, &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: props("type", &jsonschema.Schema{Const: string(e.Type)}), Required: []string{"type"}},
			Then: ref(EventDef(string(e.Type))),
		})
	}
	g.defs["Event"] = ev
}

// docComments reads the Go doc comments of package protocol into the
// reflector's comment map (keys "pkg.Type" and "pkg.Type.Field"): a type's
// first sentence, a field's whole comment.
func docComments(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	p, ok := pkgs["protocol"]
	if !ok {
		return nil, fmt.Errorf("%s: no package protocol", dir)
	}
	var d doc.Package
	out := map[string]string{}
	for _, f := range p.Files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if !ts.Name.IsExported() {
					continue
				}
				text := ts.Doc.Text()
				if text == "" && len(gd.Specs) == 1 {
					text = gd.Doc.Text()
				}
				out[pkgPath+"."+ts.Name.Name] = flat(d.Synopsis(text))
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, f := range st.Fields.List {
					text := f.Doc.Text()
					if text == "" {
						text = f.Comment.Text()
					}
					for _, n := range f.Names {
						if text != "" && n.IsExported() {
							out[pkgPath+"."+ts.Name.Name+"."+n.Name] = flat(text)
						}
					}
				}
			}
		}
	}
	return out, nil
}

// flat joins a comment's lines into one.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
