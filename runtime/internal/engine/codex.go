package engine

import (
	"context"
	"log/slog"

	"octet.dev/host/runtime/internal/auth"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/prepare"
)

// The Codex and Copilot routes' credential glue is package auth's; these
// are the engine's thin calls into it.

// codexPrefix selects a Codex route: "codex/<model>" (auth.CodexPrefix).
const codexPrefix = auth.CodexPrefix

// authEnv is what package auth needs of the Agent.
func (a *Agent) authEnv() auth.Env {
	return auth.Env{Home: a.opts.Home, Now: a.opts.Now, HTTPClient: a.opts.HTTPClient, IdleTimeout: a.opts.IdleTimeout,
		CodexTokenURL: a.opts.CodexTokenURL, CodexBaseURL: a.opts.CodexBaseURL, Copilot: a.opts.Copilot}
}

// reauthCodex answers a model call that failed with err. When the call was
// refused with HTTP 401 on a Codex route, and the step has not refreshed
// its credential yet, auth.RefreshCodex refreshes the credential and
// rebuilds the route's provider with it, and the call is to be made once
// more (true). Otherwise it returns false and err, with the refresh's
// failure added when one was tried. The repeated call is not a recovery
// attempt and emits no event (auth.RefreshCodex).
func (d *driver) reauthCodex(ctx context.Context, step int, err error) (bool, error) {
	if d.reauthed == step || !auth.CodexUnauthorized(d.p.model, err) {
		return false, err
	}
	d.reauthed = step // once per step: a refreshed credential refused again ends the turn
	log := d.a.log.With(slog.String("run_id", d.p.req.RunID), slog.Int("step", step), slog.String("model", d.p.model.ID))
	r, err := auth.RefreshCodex(ctx, d.a.authEnv(), log, d.p.key, err, func(bearer string, headers map[string]string) (Provider, error) {
		return d.a.opts.ProviderFactory(prepare.RouteFor(d.p.model, bearer, headers))
	})
	if err != nil {
		return false, err
	}
	d.p.prov, d.p.key = r.Provider, r.Key
	for _, s := range r.Secrets {
		d.p.red.add(s)
	}
	return true, nil
}

// requestOutputCap is the max_output_tokens a model call on m asks for
// (auth.OutputCap: none on the ChatGPT Codex backend).
func requestOutputCap(m catalog.Model) int { return auth.OutputCap(m) }

// codexAvailable reports whether a Codex credential exists or can be
// imported, without importing it.
func (a *Agent) codexAvailable() bool { return auth.CodexAvailable(a.opts.Home) }
