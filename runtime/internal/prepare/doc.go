// Package prepare turns a run request into a prepared run (CONTRACT §8):
// it checks every field, resolves the route and its model (catalog,
// inline, Codex and Copilot routes, the credential) and builds its
// provider, selects the tool set and measures it against the budget,
// protects the operator's directories, reads the media inputs, resolves
// the tool policy from the operator's layers, loads the resource layers
// (context files, skills, extension findings) and opens the session. A
// request it refuses is a *RunError, refused before any provider I/O, and
// leaves nothing open.
//
// It owns the request's types (RunRequest, InlineRoute, RunError), the
// route a ProviderFactory gets (Route) and the prepared run (Run). What
// needs the agent's state (the tool budget, the terminal gate, the
// built-in skills) it asks of a Host; everything else comes in a Config.
// The engine (runtime/internal/engine) calls Prepare and executes the run;
// nothing here imports the engine or the façade.
package prepare
