package prepare

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/catalog"
	"octet.dev/host/runtime/internal/confine"
	"octet.dev/host/runtime/internal/media"
	"octet.dev/host/runtime/provider"
)

// LoadMedia checks the run's media refs against the route's model, then
// reads each input beneath the workspace root (CONTRACT §16). A type the
// route cannot take is refused before any file is read.
func LoadMedia(root *confine.Root, model *catalog.Model, refs []protocol.Media) ([]provider.Media, *RunError) {
	for i, r := range refs {
		switch {
		case r.Type == provider.MediaImage && !model.Vision():
			return nil, Refuse(protocol.CodeMediaUnsupported, "media[%s] is an image, but the route does not accept image input (model %s takes %s)",
				strconv.Itoa(i), strconv.Quote(textutil.Truncate(model.ID, 128)), strings.Join(model.EffectiveModalities(), ", "))
		case r.Type == provider.MediaAudio && !model.Audio():
			return nil, Refuse(protocol.CodeMediaUnsupported, "media[%s] is audio, but the route does not accept audio input (only OpenAI Chat routes that declare audio do)", strconv.Itoa(i))
		}
	}
	var out []provider.Media
	var images, audio int64
	for i, r := range refs {
		m, err := media.Load(root, i, media.Ref{Type: r.Type, Path: r.Path})
		switch {
		case errors.Is(err, media.ErrTooLarge):
			return nil, Refuse(protocol.CodeMediaTooLarge, "%s", strings.TrimPrefix(err.Error(), media.ErrTooLarge.Error()+": "))
		case err != nil:
			return nil, Refuse(protocol.CodeMediaInvalid, "%s", strings.TrimPrefix(err.Error(), media.ErrInvalid.Error()+": "))
		}
		if m.Type == provider.MediaAudio && !slices.Contains(catalog.AudioFormats, m.Format) {
			return nil, Refuse(protocol.CodeMediaUnsupported, "media[%s] is %s audio; the route accepts only %s", strconv.Itoa(i), m.Format, strings.Join(catalog.AudioFormats, " and "))
		}
		if m.Type == provider.MediaImage {
			images += m.Bytes
		} else {
			audio += m.Bytes
		}
		if images > media.MaxImageTotalBytes {
			return nil, Refuse(protocol.CodeMediaTooLarge, "the images add up to more than 20971520 bytes (at media[%s])", strconv.Itoa(i))
		}
		if audio > media.MaxAudioTotalBytes {
			return nil, Refuse(protocol.CodeMediaTooLarge, "the audio clips add up to more than 41943040 bytes (at media[%s])", strconv.Itoa(i))
		}
		out = append(out, m)
	}
	return out, nil
}
