package resources

import (
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/confine"
)

// Extension discovery (CONTRACT §18). Every layer may hold
// extensions/<name>/extension.json. The host reads the manifests and
// reports what it found; it never starts an extension: the Controlled
// policy forbids executable extensions in octet-host, and protocol 1 has
// no opt-in. Nothing here runs, execs or even stats a manifest's command.

// Extension layout and limits.
const (
	// ExtensionsDir is the folder of a layer that holds extensions.
	ExtensionsDir = "extensions"
	// ManifestFile is an extension's manifest, in its folder.
	ManifestFile = "extension.json"
	// ExtensionAPIVersion is the extension API this host knows. A manifest
	// naming another major or minor version is api_version_unsupported; a
	// patch number ("0.3.1") does not matter.
	ExtensionAPIVersion = "0.3"
	// MaxManifestBytes caps an extension.json; a larger one is invalid.
	MaxManifestBytes = 64 << 10
	// MaxExtensionFindings bounds the findings of one run; past it one
	// truncated finding says how many extension names were left out.
	MaxExtensionFindings = 64

	maxExtensionName    = 128 // bytes of a folder name
	maxExtensionVersion = 64  // bytes
	maxExtensionDesc    = 1024
	maxCommandArgs      = 256
	maxCommandArgBytes  = 4096
)

// ExtensionFinding is one extension_notification of a run: what discovery
// found about one extension folder. Extension is the folder's name (so a
// broken manifest is named too); Layer is a Layer.Name; Message names the
// layer by its label, never by an absolute path, and never repeats the
// manifest's command or description.
type ExtensionFinding struct {
	Extension string
	Layer     string
	Level     string        // protocol.LevelInfo, LevelWarning or LevelError
	Code      protocol.Code // one of protocol.ExtensionCodes
	Message   string
	Path      string // relative to the layer, for the log; "" for truncated
}

// manifest is extension.json. Every member is required; pointers tell a
// missing (or null) member from an empty one.
type manifest struct {
	Name        *string   `json:"name"`
	Version     *string   `json:"version"`
	Description *string   `json:"description"`
	APIVersion  *string   `json:"api_version"`
	Command     *[]string `json:"command"`
}

// extCandidate is one layer's folder of an extension name.
type extCandidate struct {
	layer *Layer
	link  bool // the folder is a symbolic link
}

// Extensions discovers the extension folders of every layer and returns
// the findings to report, at most MaxExtensionFindings and then one
// truncated finding. They are sorted by extension name; for one name, the
// layers are examined from the highest down: each broken or unsupported
// manifest is reported, the first valid one is not_started (the host never
// starts it), and every folder below it is shadowed, not examined. Entries
// of extensions/ that are not folders, or whose names start with ".", are
// ignored; a layer whose extensions/ cannot be read gets a Diagnostic.
func (s *Set) Extensions() []ExtensionFinding {
	byName := map[string][]extCandidate{}
	for i := range s.Layers {
		l := &s.Layers[i]
		if l.Root == nil {
			continue
		}
		ents, err := s.readDir(l, ExtensionsDir)
		if err != nil {
			if d, report := fileDiag(l.Name, ExtensionsDir, err); report {
				s.add(d)
			}
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if strings.HasPrefix(n, ".") {
				continue
			}
			if link := e.Type()&fs.ModeSymlink != 0; link || e.IsDir() {
				byName[n] = append(byName[n], extCandidate{layer: l, link: link})
			}
		}
	}
	if len(byName) == 0 {
		return nil
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)

	var out []ExtensionFinding
	var buf []byte
	var found []ExtensionFinding
	for i, name := range names {
		found = found[:0]
		cands := byName[name]
		var won *extCandidate
		for j := len(cands) - 1; j >= 0; j-- {
			c := &cands[j]
			if won != nil {
				found = append(found, ExtensionFinding{Extension: displayName(name), Layer: c.layer.Name, Level: protocol.LevelInfo,
					Code: protocol.CodeShadowed, Path: ExtensionsDir + "/" + name,
					Message: "extension " + quote(name) + " in " + c.layer.Label + " is shadowed by the one in " + won.layer.Label + " (not examined)"})
				continue
			}
			f := s.extension(c, name, &buf)
			found = append(found, f)
			if f.Code == protocol.CodeNotStarted {
				won = c
			}
		}
		if len(out)+len(found) > MaxExtensionFindings {
			room := MaxExtensionFindings - len(out)
			out = append(out, found[:room]...)
			left := len(names) - i
			out = append(out, ExtensionFinding{Level: protocol.LevelWarning, Code: protocol.CodeTruncated,
				Message: "findings about " + strconv.Itoa(left) + " more extension names were left out: at most " +
					strconv.Itoa(MaxExtensionFindings) + " are reported a run (the first by name are)"})
			return out
		}
		out = append(out, found...)
	}
	return out
}

// examineExtension reads and checks the manifest of one folder.
func examineExtension(c *extCandidate, name string, buf []byte) ExtensionFinding {
	l := c.layer
	dir := ExtensionsDir + "/" + name
	rel := dir + "/" + ManifestFile
	f := ExtensionFinding{Extension: displayName(name), Layer: l.Name, Path: rel}
	at := "extension " + quote(name) + " in " + l.Label
	invalid := func(msg string) ExtensionFinding {
		f.Level, f.Code, f.Message = protocol.LevelError, protocol.CodeManifestInvalid, at+": "+msg
		return f
	}
	if c.link {
		f.Path = dir
		return invalid("the folder is a symbolic link, which is not followed")
	}
	if err := checkExtensionName(name); err != nil {
		f.Path = dir
		return invalid("the folder name " + err.Error())
	}
	data, size, err := readHeadInto(l.Root, rel, buf, MaxManifestBytes)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return invalid("the folder has no " + ManifestFile)
		case errors.Is(err, confine.ErrSymlink):
			return invalid(ManifestFile + " is a symbolic link, which is not followed")
		case errors.Is(err, confine.ErrIsDir), errors.Is(err, confine.ErrNotRegular), errors.Is(err, confine.ErrNotDir):
			return invalid(ManifestFile + " is not a regular file")
		default:
			return invalid(ManifestFile + " cannot be read")
		}
	}
	if size > MaxManifestBytes {
		return invalid(ManifestFile + " is " + strconv.FormatInt(size, 10) + " bytes; the cap is " + strconv.Itoa(MaxManifestBytes))
	}
	m, msg := parseManifest(data)
	if msg != "" {
		return invalid(msg)
	}
	if *m.Name != name {
		return invalid("name " + quote(*m.Name) + " differs from its folder's name")
	}
	if msg := m.check(); msg != "" {
		return invalid(msg)
	}
	api := *m.APIVersion
	majorMinor, ok := apiMajorMinor(api)
	if !ok {
		return invalid("api_version " + quote(api) + " is not a version MAJOR.MINOR (or MAJOR.MINOR.PATCH) of decimal numbers")
	}
	if majorMinor != ExtensionAPIVersion {
		f.Level, f.Code = protocol.LevelWarning, protocol.CodeAPIVersionUnsupported
		f.Message = at + ": api_version " + quote(api) + " is not supported; this host knows extension API " + ExtensionAPIVersion
		return f
	}
	f.Level, f.Code = protocol.LevelInfo, protocol.CodeNotStarted
	f.Message = at + " (version " + quote(*m.Version) + ", extension API " + api + ") is valid and was not started: " +
		"this host never starts extensions (the Controlled policy forbids executable extensions, and there is no opt-in)"
	return f
}

// parseManifest decodes extension.json strictly: one JSON object, valid
// UTF-8, no duplicate or unknown member, members of the right types, all
// present. The message says what is wrong ("" when nothing is) without
// repeating a value of the file other than a member's name.
func parseManifest(data []byte) (manifest, string) {
	var m manifest
	if !utf8.Valid(data) {
		return m, ManifestFile + " is not valid UTF-8"
	}
	err := json.Unmarshal(data, &m, json.RejectUnknownMembers(true))
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case err == nil:
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return m, ManifestFile + " holds member " + quote(syn.JSONPointer.LastToken()) + " twice"
	case errors.As(err, &syn):
		return m, ManifestFile + " is not valid JSON (at byte " + strconv.FormatInt(syn.ByteOffset, 10) + ")"
	case errors.As(err, &sem) && sem.Err == json.ErrUnknownName:
		return m, ManifestFile + " holds unknown member " + quote(sem.JSONPointer.LastToken()) +
			"; the members are name, version, description, api_version and command"
	case errors.As(err, &sem) && sem.JSONPointer == "":
		return m, ManifestFile + " must hold one JSON object"
	case errors.As(err, &sem):
		member, _, _ := strings.Cut(strings.TrimPrefix(string(sem.JSONPointer), "/"), "/")
		if member == "command" {
			return m, "command must be an array of strings"
		}
		return m, quote(member) + " must be a string"
	default:
		return m, ManifestFile + " is not valid JSON"
	}
	var missing []string
	for _, f := range []struct {
		name string
		nil  bool
	}{{"name", m.Name == nil}, {"version", m.Version == nil}, {"description", m.Description == nil},
		{"api_version", m.APIVersion == nil}, {"command", m.Command == nil}} {
		if f.nil {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return m, ManifestFile + " lacks " + strings.Join(missing, ", ") + " (null counts as missing)"
	}
	return m, ""
}

// check applies the rules of each member but api_version's (the caller
// tells a malformed version from an unsupported one).
func (m *manifest) check() string {
	switch v := *m.Version; {
	case v == "" || len(v) > maxExtensionVersion || !printable(v):
		return "version must be 1 to " + strconv.Itoa(maxExtensionVersion) + " bytes without control characters"
	}
	switch d := *m.Description; {
	case strings.TrimSpace(d) == "":
		return "description must not be empty"
	case utf8.RuneCountInString(d) > maxExtensionDesc:
		return "description is " + strconv.Itoa(utf8.RuneCountInString(d)) + " characters; the limit is " + strconv.Itoa(maxExtensionDesc)
	}
	cmd := *m.Command
	switch {
	case len(cmd) == 0:
		return "command must name a program: an array of at least one string"
	case len(cmd) > maxCommandArgs:
		return "command has " + strconv.Itoa(len(cmd)) + " entries; the limit is " + strconv.Itoa(maxCommandArgs)
	}
	for i, a := range cmd {
		if a == "" || len(a) > maxCommandArgBytes || strings.IndexByte(a, 0) >= 0 {
			return "command[" + strconv.Itoa(i) + "] must be 1 to " + strconv.Itoa(maxCommandArgBytes) + " bytes without a NUL"
		}
	}
	return ""
}

// apiMajorMinor returns "MAJOR.MINOR" of an api_version of the form
// MAJOR.MINOR or MAJOR.MINOR.PATCH, each a decimal number without a
// leading zero (at most 9 digits).
func apiMajorMinor(v string) (string, bool) {
	parts := strings.Split(v, ".")
	if len(parts) != 2 && len(parts) != 3 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || len(p) > 9 || (len(p) > 1 && p[0] == '0') {
			return "", false
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return "", false
			}
		}
	}
	return parts[0] + "." + parts[1], true
}

// checkExtensionName checks a folder name for use as an extension's name
// in events: 1 to 128 bytes of UTF-8 without control or format
// characters. (A leading "." is ignored before this: such folders are not
// discovered.)
func checkExtensionName(n string) error {
	switch {
	case len(n) > maxExtensionName:
		return errors.New("is longer than " + strconv.Itoa(maxExtensionName) + " bytes")
	case !printable(n):
		return errors.New("is not UTF-8 text without control characters")
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control or format
// characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// displayName is a folder name fit for an event: the name itself when it
// passes checkExtensionName, else a bounded form with invalid bytes and
// control characters replaced by U+FFFD.
func displayName(n string) string {
	if checkExtensionName(n) == nil {
		return n
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(n, "\uFFFD") {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			r = utf8.RuneError
		}
		if b.Len()+utf8.RuneLen(r) > maxExtensionName {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
