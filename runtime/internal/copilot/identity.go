package copilot

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/runtime/internal/opfile"
)

// Identity is the operator's GitHub OAuth app and the editor identity the
// Copilot API is told. This project hard-codes none of it: it comes from
// the "copilot" member of ~/.octet/settings.json (LoadIdentity) or from the
// embedding application.
type Identity struct {
	// ClientID is the OAuth client id of the operator's GitHub app, used by
	// the device login only.
	ClientID string `json:"client_id"`
	// Scope is the OAuth scope the login asks for; empty means "read:user".
	Scope string `json:"scope"`
	// EditorVersion, EditorPluginVersion, IntegrationID and UserAgent are
	// sent as Editor-Version, Editor-Plugin-Version, Copilot-Integration-Id
	// and User-Agent on the session exchange, the inventory and inference,
	// when set.
	EditorVersion       string `json:"editor_version"`
	EditorPluginVersion string `json:"editor_plugin_version"`
	IntegrationID       string `json:"integration_id"`
	UserAgent           string `json:"user_agent"`
}

// ErrNoClientID is matched by the error of a login without an OAuth client
// id configured.
var ErrNoClientID = errors.New(`copilot: no OAuth client id is configured: set "copilot": {"client_id": "<your GitHub OAuth app's client id>"} in ~/.octet/settings.json (register an OAuth app with device flow enabled at https://github.com/settings/developers); this project ships none`)

// Validate checks that every set value fits an HTTP header or a form field.
func (id Identity) Validate() error {
	for _, f := range []struct{ name, v string }{
		{"client_id", id.ClientID}, {"scope", id.Scope}, {"editor_version", id.EditorVersion},
		{"editor_plugin_version", id.EditorPluginVersion}, {"integration_id", id.IntegrationID}, {"user_agent", id.UserAgent},
	} {
		if f.v != "" && (!headerSafe(f.v) || len(f.v) > 256) {
			return fmt.Errorf("copilot: settings copilot.%s must be at most 256 printable ASCII characters", f.name)
		}
	}
	return nil
}

// Headers are the identity headers, those set.
func (id Identity) Headers() map[string]string {
	h := map[string]string{}
	for name, v := range map[string]string{
		"Editor-Version": id.EditorVersion, "Editor-Plugin-Version": id.EditorPluginVersion,
		"Copilot-Integration-Id": id.IntegrationID, "User-Agent": id.UserAgent,
	} {
		if v != "" {
			h[name] = v
		}
	}
	return h
}

func (id Identity) scope() string {
	if id.Scope != "" {
		return id.Scope
	}
	return "read:user"
}

// LoadIdentity reads the "copilot" member of home/.octet/settings.json
// (members: client_id, scope, editor_version, editor_plugin_version,
// integration_id, user_agent; an unknown member is an error). A missing
// file or member is the zero Identity.
func LoadIdentity(home string) (Identity, error) {
	data, err := opfile.Read(filepath.Join(home, ".octet", "settings.json"), "~/.octet/settings.json", opfile.SettingsLimit, opfile.Follow)
	if errors.Is(err, fs.ErrNotExist) {
		return Identity{}, nil
	}
	var refused *opfile.Error
	if errors.As(err, &refused) {
		return Identity{}, fmt.Errorf("copilot: %w", err)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("copilot: reading ~/.octet/settings.json: %v", errors.Unwrap(err))
	}
	return ParseIdentity(data)
}

// ParseIdentity reads the "copilot" member of a settings file's bytes.
func ParseIdentity(data []byte) (Identity, error) {
	var top struct {
		Copilot jsontext.Value `json:"copilot"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return Identity{}, errors.New("copilot: ~/.octet/settings.json is not a valid JSON object")
	}
	var id Identity
	if len(top.Copilot) == 0 || string(top.Copilot) == "null" {
		return id, nil
	}
	if err := json.Unmarshal(top.Copilot, &id, json.RejectUnknownMembers(true)); err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "unknown"); i >= 0 {
			msg = msg[i:]
		}
		return Identity{}, fmt.Errorf("copilot: ~/.octet/settings.json: copilot must be an object of strings (client_id, scope, editor_version, editor_plugin_version, integration_id, user_agent): %s", msg)
	}
	return id, id.Validate()
}
