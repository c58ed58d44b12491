// Package auth is the engine's credential glue for the routes whose
// credential this host owns: "codex/<model>" (the Codex CLI's login,
// imported, refreshed before expiry and once more when the provider
// refuses it with HTTP 401 during a step) and "copilot/<model>" (the
// GitHub Copilot seam: the model table, the short-lived session, the codec
// a model's protocol selects). It resolves those routes to a catalog model
// and a credential or provider, lists their models, and maps its failures
// to run refusals (Refusal, CONTRACT §8).
//
// It knows nothing of a run: the engine gives it an Env (the home
// directory, the clock, the HTTP client, the overrides) and, for a
// refresh, the logger and a way to rebuild the route's provider; the
// engine keeps the once-per-step bookkeeping and the redactor. It imports
// runtime/internal/codex, runtime/internal/copilot, the catalog and the
// wire codecs; never the engine, never the façade.
package auth
