package prepare

import (
	"context"
	"log/slog"

	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/resources"
)

// Resources are what a run's resource layers offer (CONTRACT §18).
type Resources struct {
	Set        *resources.Set     // the layers, open: closed with the run
	Skills     *resources.Catalog // the skills offered, by name
	SkillNames []string           // the same, sorted, for accepted
	Prompt     string             // context files and skills for the system prompt
	// Extension discovery's findings, sent right after started.
	Extensions []protocol.ExtensionNotification
}

// LoadResources resolves the run's resource layers (CONTRACT §18) and
// reads the context files and skills they offer, after builtins (the
// host's own skills). Nothing here refuses a run: what cannot be read is
// skipped and logged, with runID.
func LoadResources(cfg *Config, root *confine.Root, trusted bool, builtins []resources.Skill, runID string) Resources {
	set := resources.Resolve(resources.Options{Home: cfg.Home, Workspace: root, TrustWorkspace: trusted, Roots: cfg.ResourceRoots, Cache: cfg.Cache})
	contexts := set.Contexts(root)
	skills := set.Skills(builtins...)
	r := Resources{Set: set, Skills: resources.NewCatalog(skills), SkillNames: make([]string, len(skills))}
	for i, k := range skills {
		r.SkillNames[i] = k.Name
	}
	r.Prompt = resources.Prompt(contexts, skills)
	r.Extensions = discoverExtensions(cfg.Log, set, runID)
	// An override is the layers working as meant (info); everything else
	// was skipped or cut (warn). Messages and paths are relative to layers.
	for _, d := range set.Diagnostics() {
		lvl := slog.LevelWarn
		if d.Code == resources.DiagShadowed {
			lvl = slog.LevelInfo
		}
		cfg.Log.LogAttrs(context.Background(), lvl, d.Message, slog.String("run_id", runID), slog.String("layer", d.Layer),
			slog.String("code", d.Code), slog.String("path", d.Path))
	}
	return r
}

// discoverExtensions reads the layers' extension manifests (CONTRACT §18)
// and returns the findings a run reports right after started. Nothing is
// started: the Controlled policy forbids executable extensions, and
// protocol 1 has no opt-in. A broken or unsupported manifest is logged as a
// warning too; the informational findings (not_started, shadowed) only at
// debug level, since every run repeats them.
func discoverExtensions(log *slog.Logger, set *resources.Set, runID string) []protocol.ExtensionNotification {
	found := set.Extensions()
	if len(found) == 0 {
		return nil
	}
	out := make([]protocol.ExtensionNotification, len(found))
	for i, f := range found {
		out[i] = protocol.ExtensionNotification{Extension: f.Extension, Layer: f.Layer, Level: f.Level, Code: f.Code, Message: f.Message}
		lvl := slog.LevelWarn
		if f.Level == protocol.LevelInfo {
			lvl = slog.LevelDebug
		}
		log.LogAttrs(context.Background(), lvl, f.Message, slog.String("run_id", runID), slog.String("layer", f.Layer),
			slog.String("code", string(f.Code)), slog.String("path", f.Path))
	}
	return out
}
