package engine

import (
	"octet.dev/host/protocol"
	"octet.dev/host/runtime/internal/engine/modelcall"
	"octet.dev/host/runtime/provider"
)

// Output media (CONTRACT §9 output_media). The decoders spool what the
// model produces (a generated image, audio output) into temporary files of
// the session's media folder (provider.Request.SpoolDir) and report each
// finished file as an EventMedia. An attempt's files stay temporary until
// the attempt is committed: a failed or replaced attempt's files are
// removed (dropMedia), so a retry never leaves an orphan; a committed
// attempt's files are renamed into place as <session>.media/<sha256> and
// synced (commitMedia), then announced by output_media with the stored
// path (the bytes never cross a frame), and the assistant message records
// typed references to them.

// commitMedia stores the committed attempt's media beside the session,
// durably, emits output_media for each and returns the references the
// assistant message records. On a failure the files not stored yet are
// removed.
func (d *driver) commitMedia(step int, t *modelcall.Turn) ([]provider.Media, error) {
	ms := t.Media
	t.Media = nil
	var refs []provider.Media
	for i, m := range ms {
		path, err := d.p.sess.AdoptMedia(m.Spool, m.SHA256)
		if err != nil {
			modelcall.DropMedia(ms[i+1:])
			return nil, err
		}
		refs = append(refs, provider.Media{Type: m.Type, MIMEType: m.MIMEType, Format: m.Format, SHA256: m.SHA256, Bytes: m.Bytes})
		d.stream(protocol.TypeOutputMedia, &protocol.OutputMedia{Step: step, Type: m.Type, MimeType: m.MIMEType, Path: path, Bytes: m.Bytes, SHA256: m.SHA256})
	}
	return refs, nil
}
