package main

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/rs/zerolog"
)

// zerologHandler is a slog.Handler writing each record through a zerolog
// logger. The runtime and the NDJSON adapter log to a *slog.Logger; with
// this handler their lines reach stderr in the binary's own zerolog format
// (its level names, "message", its time and "component" field), filtered
// by --log-level.
//
// Levels: below slog.LevelDebug (runtime.LevelTrace among them) is trace,
// then debug, info, warn, and error from slog.LevelError up (never fatal
// or panic: a record does not end the process). Attributes become fields
// of the same name (an error value is written like zerolog's Err, a
// LogValuer is resolved first), a group becomes a nested object, and an
// empty group is left out, as slog requires. The record's time and source
// are not written: the zerolog logger stamps its own time, if it has one.
type zerologHandler struct {
	z      zerolog.Logger // carries the attributes given before any group
	groups []openGroup    // the groups opened by WithGroup, outermost first
}

// openGroup is a group opened by WithGroup and the attributes given while
// it was the innermost one.
type openGroup struct {
	name  string
	attrs []slog.Attr
}

func newZerologHandler(z zerolog.Logger) *zerologHandler { return &zerologHandler{z: z} }

// zerologLevel maps a slog level to zerolog's.
func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l < slog.LevelDebug:
		return zerolog.TraceLevel
	case l < slog.LevelInfo:
		return zerolog.DebugLevel
	case l < slog.LevelWarn:
		return zerolog.InfoLevel
	case l < slog.LevelError:
		return zerolog.WarnLevel
	default:
		return zerolog.ErrorLevel
	}
}

// Enabled reports whether the zerolog logger writes l: its level and
// zerolog's global level both admit it.
func (h *zerologHandler) Enabled(_ context.Context, l slog.Level) bool {
	zl := zerologLevel(l)
	return zl >= h.z.GetLevel() && zl >= zerolog.GlobalLevel()
}

func (h *zerologHandler) Handle(_ context.Context, r slog.Record) error {
	e := h.z.WithLevel(zerologLevel(r.Level))
	if e == nil {
		return nil // the zerolog logger drops this level
	}
	if len(h.groups) == 0 {
		r.Attrs(func(a slog.Attr) bool {
			addAttr(e, a)
			return true
		})
		e.Msg(r.Message)
		return nil
	}
	// Build the groups from the innermost out: the record's attributes go
	// into the innermost one.
	var inner *zerolog.Event // nil: nothing inside so far
	for i := len(h.groups) - 1; i >= 0; i-- {
		d, n := zerolog.Dict(), 0
		for _, a := range h.groups[i].attrs {
			if _, ok := addAttr(d, a); ok {
				n++
			}
		}
		if i == len(h.groups)-1 {
			r.Attrs(func(a slog.Attr) bool {
				if _, ok := addAttr(d, a); ok {
					n++
				}
				return true
			})
		} else if inner != nil {
			d.Dict(h.groups[i+1].name, inner)
			n++
		}
		inner = nil
		if n > 0 {
			inner = d
		}
	}
	if inner != nil {
		e.Dict(h.groups[0].name, inner)
	}
	e.Msg(r.Message)
	return nil
}

func (h *zerologHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h2 := *h
	if len(h.groups) == 0 {
		// Outside any group: rendered once, into the zerolog context.
		c := h.z.With()
		for _, a := range attrs {
			c, _ = addAttr(c, a)
		}
		h2.z = c.Logger()
		return &h2
	}
	h2.groups = slices.Clone(h.groups)
	last := &h2.groups[len(h2.groups)-1]
	last.attrs = append(slices.Clip(last.attrs), attrs...)
	return &h2
}

func (h *zerologHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h // slog: an empty name inlines the group
	}
	h2 := *h
	h2.groups = append(slices.Clip(h.groups), openGroup{name: name})
	return &h2
}

// fields is what a zerolog event (*zerolog.Event) and a zerolog context
// (zerolog.Context) share: an attribute is added to either the same way.
type fields[T any] interface {
	Str(key, val string) T
	Int64(key string, i int64) T
	Uint64(key string, i uint64) T
	Float64(key string, f float64) T
	Bool(key string, b bool) T
	Dur(key string, d time.Duration) T
	Time(key string, t time.Time) T
	AnErr(key string, err error) T
	Dict(key string, dict *zerolog.Event) T
	Interface(key string, i any) T
}

// addAttr adds a to f; it reports false when a adds nothing (an empty
// attribute, or a group with nothing in it).
func addAttr[T fields[T]](f T, a slog.Attr) (T, bool) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return f, false
	}
	v := a.Value
	switch v.Kind() {
	case slog.KindString:
		return f.Str(a.Key, v.String()), true
	case slog.KindInt64:
		return f.Int64(a.Key, v.Int64()), true
	case slog.KindUint64:
		return f.Uint64(a.Key, v.Uint64()), true
	case slog.KindFloat64:
		return f.Float64(a.Key, v.Float64()), true
	case slog.KindBool:
		return f.Bool(a.Key, v.Bool()), true
	case slog.KindDuration:
		return f.Dur(a.Key, v.Duration()), true
	case slog.KindTime:
		return f.Time(a.Key, v.Time()), true
	case slog.KindGroup:
		if a.Key == "" { // inlined into the enclosing object
			added := false
			for _, g := range v.Group() {
				var ok bool
				f, ok = addAttr(f, g)
				added = added || ok
			}
			return f, added
		}
		d, n := zerolog.Dict(), 0
		for _, g := range v.Group() {
			if _, ok := addAttr(d, g); ok {
				n++
			}
		}
		if n == 0 {
			return f, false
		}
		return f.Dict(a.Key, d), true
	}
	if err, ok := v.Any().(error); ok {
		return f.AnErr(a.Key, err), true
	}
	return f.Interface(a.Key, v.Any()), true
}
