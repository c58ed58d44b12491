package chat

import (
	"octet.dev/host/runtime/internal/media"
	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/provider"
)

// Audio output. A route with Config.AudioOutput streams delta.audio
// objects: transcript pieces, which are answer text, and base64 pieces of
// the audio, which are decoded into one spool file as they come and
// reported as one EventMedia at [DONE], before EventFinish. The MIME type
// is sniffed from the bytes (media.OutputMIME): the pcm16 the request asks
// for has no signature and is reported as audio/pcm.

// SetSpoolDir implements edge.MediaDecoder.
func (d *decoder) SetSpoolDir(dir string) { d.spoolDir = dir }

// Release implements edge.MediaDecoder: audio not delivered is removed.
func (d *decoder) Release() {
	if d.audio != nil {
		d.audio.Abort()
		d.audio = nil
	}
}

// audioDelta applies one delta.audio.
func (d *decoder) audioDelta(a *deltaAudio) {
	if a.Transcript != "" {
		d.Push(provider.StreamEvent{Kind: provider.EventText, Text: string(a.Transcript)})
	}
	if a.Data == "" {
		return
	}
	d.MarkStarted()
	if d.audio == nil {
		sp, err := media.NewSpool(d.spoolDir, provider.MediaAudio, true)
		if err != nil {
			d.fail(provider.FailDecode, "", "the audio output could not be spooled", err)
			return
		}
		d.audio = sp
	}
	if _, err := d.audio.Write([]byte(a.Data)); err != nil {
		d.fail(provider.FailDecode, "", "audio output: "+err.Error(), err)
	}
}

// finishAudio closes the audio spool and queues its EventMedia.
func (d *decoder) finishAudio() {
	if d.audio == nil {
		return
	}
	m, err := d.audio.Finish()
	d.audio = nil
	if err != nil {
		d.err = edge.Failure(provider.FailDecode, "", "audio output: "+err.Error(), err)
		return
	}
	if m != nil {
		d.Add(provider.StreamEvent{Kind: provider.EventMedia, Media: m})
	}
}
