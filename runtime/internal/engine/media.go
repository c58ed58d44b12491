package engine

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/media"
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

// loadMedia checks the run's media against the route, then reads each
// input beneath the workspace (CONTRACT §16). A type the route cannot take
// is refused before any file is read.
func (p *prepared) loadMedia() *RunError {
	refs := p.req.Media
	for i, r := range refs {
		switch {
		case r.Type == provider.MediaImage && !p.model.Vision():
			return refuse(protocol.CodeMediaUnsupported, "media[%s] is an image, but the route does not accept image input (model %s takes %s)",
				strconv.Itoa(i), strconv.Quote(textutil.Truncate(p.model.ID, 128)), strings.Join(p.model.EffectiveModalities(), ", "))
		case r.Type == provider.MediaAudio && !p.model.Audio():
			return refuse(protocol.CodeMediaUnsupported, "media[%s] is audio, but the route does not accept audio input (only OpenAI Chat routes that declare audio do)", strconv.Itoa(i))
		}
	}
	var images, audio int64
	for i, r := range refs {
		m, err := media.Load(p.root, i, media.Ref{Type: r.Type, Path: r.Path})
		switch {
		case errors.Is(err, media.ErrTooLarge):
			return refuse(protocol.CodeMediaTooLarge, "%s", strings.TrimPrefix(err.Error(), media.ErrTooLarge.Error()+": "))
		case err != nil:
			return refuse(protocol.CodeMediaInvalid, "%s", strings.TrimPrefix(err.Error(), media.ErrInvalid.Error()+": "))
		}
		if m.Type == provider.MediaAudio && !slices.Contains(catalog.AudioFormats, m.Format) {
			return refuse(protocol.CodeMediaUnsupported, "media[%s] is %s audio; the route accepts only %s", strconv.Itoa(i), m.Format, strings.Join(catalog.AudioFormats, " and "))
		}
		if m.Type == provider.MediaImage {
			images += m.Bytes
		} else {
			audio += m.Bytes
		}
		if images > media.MaxImageTotalBytes {
			return refuse(protocol.CodeMediaTooLarge, "the images add up to more than 20971520 bytes (at media[%s])", strconv.Itoa(i))
		}
		if audio > media.MaxAudioTotalBytes {
			return refuse(protocol.CodeMediaTooLarge, "the audio clips add up to more than 41943040 bytes (at media[%s])", strconv.Itoa(i))
		}
		p.media = append(p.media, m)
	}
	return nil
}
