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
			return nil, &RunError{Code: protocol.CodeMediaUnsupported, Message: "media[" + strconv.Itoa(i) + "] is an image, but the route does not accept image input (model " + strconv.Quote(textutil.Truncate(model.ID, 128)) + " takes " + strings.Join(model.EffectiveModalities(), ", ") + ")"}
		case r.Type == provider.MediaAudio && !model.Audio():
			return nil, &RunError{Code: protocol.CodeMediaUnsupported, Message: "media[" + strconv.Itoa(i) + "] is audio, but the route does not accept audio input (only OpenAI Chat routes that declare audio do)"}
		}
	}
	var out []provider.Media
	var images, audio int64
	for i, r := range refs {
		m, err := media.Load(root, i, media.Ref{Type: r.Type, Path: r.Path})
		switch {
		case errors.Is(err, media.ErrTooLarge):
			return nil, &RunError{Code: protocol.CodeMediaTooLarge, Message: strings.TrimPrefix(err.Error(), media.ErrTooLarge.Error()+": ")}
		case err != nil:
			return nil, &RunError{Code: protocol.CodeMediaInvalid, Message: strings.TrimPrefix(err.Error(), media.ErrInvalid.Error()+": ")}
		}
		if m.Type == provider.MediaAudio && !slices.Contains(catalog.AudioFormats, m.Format) {
			return nil, &RunError{Code: protocol.CodeMediaUnsupported, Message: "media[" + strconv.Itoa(i) + "] is " + m.Format + " audio; the route accepts only " + strings.Join(catalog.AudioFormats, " and ")}
		}
		if m.Type == provider.MediaImage {
			images += m.Bytes
		} else {
			audio += m.Bytes
		}
		if images > media.MaxImageTotalBytes {
			return nil, &RunError{Code: protocol.CodeMediaTooLarge, Message: "the images add up to more than 20971520 bytes (at media[" + strconv.Itoa(i) + "])"}
		}
		if audio > media.MaxAudioTotalBytes {
			return nil, &RunError{Code: protocol.CodeMediaTooLarge, Message: "the audio clips add up to more than 41943040 bytes (at media[" + strconv.Itoa(i) + "])"}
		}
		out = append(out, m)
	}
	return out, nil
}
