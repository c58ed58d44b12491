// Package resources resolves the operator's resource layers (CONTRACT §18)
// and reads what a run takes from them: AGENTS.md context files, Agent
// Skills, and the findings of extension discovery (extensions are
// reported, never started). The layers, lowest precedence first, are the user's ~/.octet, the
// workspace's .octet when the workspace is trusted, then the explicit
// roots in the order the operator gave them. A later layer overrides an
// earlier one by name, and says so in a diagnostic (shadowed).
//
// Every file is opened by descriptor beneath its layer's directory with
// package confine: no link is followed, nothing above the layer is
// reached. A link, a file over its cap or a file that is not UTF-8 is
// skipped with a diagnostic; nothing here fails a run. What reaches the
// model is deterministic (sorted by name, fixed formatting), so the same
// files give the same bytes, and names layers, never absolute host paths.
//
// Resolve, Layer and Diagnostic are shared by every kind of resource:
// context files, skills and extensions.
package resources
