package engine

import (
	"fmt"
	"slices"

	"octet.dev/host/runtime/provider"
)

// withMediaBytes attaches to every media reference of msgs its bytes: this
// run's from memory, earlier runs' from the session's media objects.
func (d *driver) withMediaBytes(msgs []provider.Message) ([]provider.Message, error) {
	have := make(map[string][]byte, len(d.p.media))
	for _, m := range d.p.media {
		have[m.SHA256] = m.Data
	}
	for i := range msgs {
		if len(msgs[i].Media) == 0 {
			continue
		}
		media := slices.Clone(msgs[i].Media) // the session's copy stays as it is
		for j := range media {
			data, ok := have[media[j].SHA256]
			if !ok {
				var err error
				if data, err = d.p.sess.Media(media[j].SHA256); err != nil {
					return nil, fmt.Errorf("the session's media could not be read: %w", err)
				}
				have[media[j].SHA256] = data
			}
			media[j].Data = data
		}
		msgs[i].Media = media
	}
	return msgs, nil
}
