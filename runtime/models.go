package runtime

import "context"

func (a *Agent) models(ctx context.Context, offline bool) ([]Model, []DiscoveryIssue, error) {
	return nil, nil, nil
}
