package fakeprovider

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// fixtureFS holds unchanged copies of the project's recorded provider
// streams (fixtures/<folder>/…, with their SOURCES.md and the license texts
// in fixtures/).
//
//go:embed all:fixtures
var fixtureFS embed.FS

// Fixture file suffixes.
const (
	sseSuffix     = ".sse"
	chunksSuffix  = ".chunks.jsonl"
	headersSuffix = ".headers.json"
	errorSuffix   = ".json"
	errorsDir     = "errors/"
)

// fixtureIndex maps mode → fixture name → file path in fixtureFS.
var fixtureIndex = buildFixtureIndex()

func buildFixtureIndex() map[Mode]map[string]string {
	idx := make(map[Mode]map[string]string, len(allModes))
	for _, m := range allModes {
		names := map[string]string{}
		dir := path.Join("fixtures", m.fixtureDir())
		err := fs.WalkDir(fixtureFS, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel := strings.TrimPrefix(p, dir+"/")
			var name string
			switch {
			case strings.HasSuffix(rel, headersSuffix):
				return nil
			case strings.HasSuffix(rel, sseSuffix):
				name = strings.TrimSuffix(rel, sseSuffix)
			case strings.HasSuffix(rel, chunksSuffix):
				name = strings.TrimSuffix(rel, chunksSuffix)
			case strings.HasPrefix(rel, errorsDir) && strings.HasSuffix(rel, errorSuffix):
				name = strings.TrimSuffix(rel, errorSuffix)
			default:
				return nil // SOURCES.md
			}
			if old, dup := names[name]; dup {
				panic(fmt.Sprintf("fakeprovider: fixtures %s and %s have the same name", old, p))
			}
			names[name] = p
			return nil
		})
		if err != nil {
			panic("fakeprovider: reading the embedded fixtures: " + err.Error())
		}
		idx[m] = names
	}
	return idx
}

// Fixtures returns the names of the recorded fixtures of mode, sorted: the
// file names without their extension (".sse", ".chunks.jsonl"), and
// "errors/<name>" for the recorded HTTP error bodies. It returns nil for an
// unknown mode.
func Fixtures(mode Mode) []string {
	names := make([]string, 0, len(fixtureIndex[mode]))
	for name := range fixtureIndex[mode] {
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return names
}

// FixtureBody returns the response body the server sends for the named
// fixture: a ".sse" file's bytes as they are, a ".chunks.jsonl" file's lines
// framed as the provider sends them, or an error body as it is.
func FixtureBody(mode Mode, name string) ([]byte, error) {
	f, err := loadFixture(mode, name)
	if err != nil {
		return nil, err
	}
	return bytes.Join(f.events, nil), nil
}

// fixture is a loaded fixture, ready to serve.
type fixture struct {
	name   string
	mode   Mode
	status int
	header http.Header // names as recorded (not canonicalized)
	events [][]byte    // concatenated, the exact body
	stream bool        // false for an error body
}

// lookupFixture resolves name (with or without its extension) to its path.
func lookupFixture(mode Mode, name string) (string, string, error) {
	names, ok := fixtureIndex[mode]
	if !ok {
		return "", "", fmt.Errorf("fakeprovider: unknown mode %q", mode)
	}
	for _, suffix := range []string{"", sseSuffix, chunksSuffix, errorSuffix} {
		stem := strings.TrimSuffix(name, suffix)
		if p, ok := names[stem]; ok && (suffix == "" || strings.HasSuffix(p, suffix)) {
			return stem, p, nil
		}
	}
	return "", "", fmt.Errorf("fakeprovider: no fixture %q for %s (see Fixtures)", name, mode)
}

// errorStatus finds the status in an error fixture's name
// ("vercel_429-insufficient-quota").
var errorStatus = regexp.MustCompile(`_([45][0-9][0-9])-`)

// hopHeaders are recorded headers that describe the recorded connection,
// not the body, and are not replayed.
var hopHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "transfer-encoding": true, "content-length": true,
	"content-encoding": true, "te": true, "trailer": true, "upgrade": true,
	"proxy-connection": true, "proxy-authenticate": true, "proxy-authorization": true,
}

func loadFixture(mode Mode, name string) (*fixture, error) {
	stem, p, err := lookupFixture(mode, name)
	if err != nil {
		return nil, err
	}
	data, err := fixtureFS.ReadFile(p)
	if err != nil {
		return nil, err
	}
	f := &fixture{name: stem, mode: mode, status: http.StatusOK, header: http.Header{}, stream: true}
	switch {
	case strings.HasSuffix(p, sseSuffix):
		f.events = splitEvents(data)
		if err := f.loadHeaders(strings.TrimSuffix(p, sseSuffix) + headersSuffix); err != nil {
			return nil, err
		}
	case strings.HasSuffix(p, chunksSuffix):
		if f.events, err = frameChunks(mode, data); err != nil {
			return nil, fmt.Errorf("fakeprovider: fixture %s: %w", stem, err)
		}
	default:
		m := errorStatus.FindStringSubmatch(stem)
		if m == nil {
			return nil, fmt.Errorf("fakeprovider: error fixture %s has no status in its name", stem)
		}
		f.status, _ = strconv.Atoi(m[1])
		f.stream = false
		f.events = [][]byte{data}
		f.header.Set("Content-Type", "application/json")
	}
	if f.stream && !hasHeader(f.header, "content-type") {
		f.header.Set("Content-Type", "text/event-stream; charset=utf-8")
	}
	return f, nil
}

func hasHeader(h http.Header, lower string) bool {
	for k := range h {
		if strings.ToLower(k) == lower {
			return true
		}
	}
	return false
}

// loadHeaders reads the status and headers recorded with an .sse file, if
// there are any.
func (f *fixture) loadHeaders(p string) error {
	data, err := fixtureFS.ReadFile(p)
	if err != nil {
		return nil // not every recording kept its headers
	}
	var rec struct {
		Status  int                 `json:"status"`
		Headers map[string][]string `json:"headers"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return fmt.Errorf("fakeprovider: %s: %w", p, err)
	}
	if rec.Status != 0 {
		f.status = rec.Status
	}
	for k, v := range rec.Headers {
		if !hopHeaders[strings.ToLower(k)] {
			f.header[k] = append([]string(nil), v...)
		}
	}
	return nil
}

// splitEvents cuts a raw SSE body into events after each blank line,
// keeping every byte: joined, the events are the body.
func splitEvents(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.Index(b, []byte("\n\n"))
		if i < 0 {
			out = append(out, b)
			break
		}
		end := i + 2
		for end < len(b) && b[end] == '\n' {
			end++
		}
		out = append(out, b[:end])
		b = b[end:]
	}
	return out
}

// frameChunks frames the lines of a .chunks.jsonl file the way the
// provider sends them (fixtures/SOURCES.md): chat "data: <line>\n\n" and a
// final "data: [DONE]\n\n"; Responses and Anthropic "event: <type>\ndata:
// <line>\n\n" with the line's JSON type. Empty lines are skipped.
func frameChunks(mode Mode, data []byte) ([][]byte, error) {
	var out [][]byte
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if mode == ModeChat {
			out = append(out, dataEvent(line))
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &head); err != nil || head.Type == "" {
			return nil, fmt.Errorf("line %d has no JSON type", i+1)
		}
		out = append(out, namedEvent(head.Type, line))
	}
	if mode == ModeChat {
		out = append(out, []byte("data: [DONE]\n\n"))
	}
	return out, nil
}
