package responses

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"octet.dev/host/runtime/internal/media"
	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// Generated images (the image_generation tool). The final image is the
// result of the image_generation_call item in response.output_item.done;
// response.completed repeats it, and that copy is read only when nothing
// was streamed (the same rule as the rest of the output). Partial images
// (response.image_generation_call.partial_image) are provisional previews:
// they are read and dropped, never stored or reported. An image event is
// one SSE line of megabytes: past edge.LongDataAt the line is streamed
// through edge.Divert, which decodes each base64 image into a spool file
// as it is read (or into nothing, for partials and duplicates), and the
// rest of the event is decoded as usual.

// imageKeys are the members whose base64 strings a long event diverts.
var imageKeys = []string{"result", "partial_image_b64"}

// SetSpoolDir implements edge.MediaDecoder.
func (d *decoder) SetSpoolDir(dir string) { d.spoolDir = dir }

// Release implements edge.MediaDecoder: spools being written and images
// decoded but not claimed by an item are removed.
func (d *decoder) Release() {
	for _, sp := range d.spools {
		sp.Abort()
	}
	d.spools = nil
	d.dropDiverted()
}

// spoolMark begins what the skeleton of a long event holds in place of a
// spooled result, followed by its index in d.diverted: never base64 (it
// has '-' and ':'), so never a real result.
const spoolMark = "octet-spool:"

// diverted is a result a long event spooled: the media, or why its string
// was not an image. Only an image_generation_call item's result that
// fails is an error of the stream; a "result" of anything else is
// dropped.
type diverted struct {
	m   *provider.OutputMedia
	err error
}

// dropDiverted removes the images a long event spooled that no item
// claimed.
func (d *decoder) dropDiverted() {
	for _, v := range d.diverted {
		if v.m != nil {
			_ = os.Remove(v.m.Spool)
		}
	}
	d.diverted = d.diverted[:0]
}

// longData is the sse.LongData of the decoder (and of long WebSocket
// messages, typ nil): it returns the event's skeleton and leaves the
// images it spooled in d.diverted.
func (d *decoder) longData(typ []byte, value io.Reader) ([]byte, error) {
	sseType := string(typ)
	skel, err := edge.Divert(value, imageKeys, d.maxEvent, func(key string, jsonType []byte) (io.Writer, string, error) {
		t := string(jsonType)
		if t == "" {
			t = sseType
		}
		duplicate := (t == "response.completed" || t == "response.incomplete") && len(d.items) > 0
		if key != "result" || duplicate {
			return quiet{media.Discard(provider.MediaImage)}, "", nil
		}
		if err := d.countImage(); err != nil {
			return nil, "", err
		}
		sp, err := media.NewSpool(d.spoolDir, provider.MediaImage, false)
		if err != nil {
			return nil, "", edge.Failure(provider.FailDecode, "", "the generated image could not be spooled", err)
		}
		d.spools = append(d.spools, sp)
		return quiet{sp}, spoolMark + strconv.Itoa(len(d.diverted)+len(d.spools)-1), nil
	})
	if err == nil {
		for _, sp := range d.spools {
			m, ferr := sp.Finish()
			d.diverted = append(d.diverted, diverted{m, ferr})
		}
		d.spools = d.spools[:0]
	}
	if err != nil {
		d.Release()
		return nil, imageFailure(err)
	}
	return skel, nil
}

// imageFailure is the decoder failure of an image that could not be read.
func imageFailure(err error) error {
	if errors.Is(err, media.ErrOutputTooLarge) || errors.Is(err, media.ErrOutputInvalid) {
		return edge.Failure(provider.FailDecode, "", "generated image: "+err.Error(), err)
	}
	return err // read errors, sse.ErrEventTooLarge, failures already built
}

// image reports the final image of an image_generation_call item: the one
// its long event spooled, else its result decoded now. An item without a
// result (a failed generation) reports nothing.
func (d *decoder) image(w *wireItem) {
	var m *provider.OutputMedia
	switch mark, spooled := strings.CutPrefix(string(w.Result), spoolMark); {
	case spooled:
		i, err := strconv.Atoi(mark)
		if err != nil || i < 0 || i >= len(d.diverted) {
			d.fail(provider.FailDecode, "", "generated image: no spooled result "+strconv.Quote(mark), nil)
			return
		}
		v := d.diverted[i]
		d.diverted[i] = diverted{} // claimed: not removed with the others
		if v.err != nil {
			d.err = imageFailure(v.err)
			return
		}
		m = v.m
	case w.Result != "":
		if err := d.countImage(); err != nil {
			d.err = err
			return
		}
		sp, err := media.NewSpool(d.spoolDir, provider.MediaImage, false)
		if err != nil {
			d.fail(provider.FailDecode, "", "the generated image could not be spooled", err)
			return
		}
		_, _ = sp.Write([]byte(w.Result))
		if m, err = sp.Finish(); err != nil {
			d.err = imageFailure(err)
			return
		}
	}
	if m != nil {
		d.Push(provider.StreamEvent{Kind: provider.EventMedia, Media: m})
	}
}

// quiet hands a spool what Divert reads without stopping it: a string that
// is not an image (too large, not base64) is an error of the stream only
// when an image item claims it (image), so the spool keeps its error for
// Finish and the line is read on.
type quiet struct{ sp *media.Spool }

func (q quiet) Write(p []byte) (int, error) {
	_, _ = q.sp.Write(p)
	return len(p), nil
}

// countImage counts one more image spool of the response and fails past
// media.MaxOutputImages.
func (d *decoder) countImage() error {
	d.images++
	if d.images > media.MaxOutputImages {
		return edge.Failure(provider.FailDecode, "", "the response generates more than "+strconv.Itoa(media.MaxOutputImages)+" images", nil)
	}
	return nil
}
