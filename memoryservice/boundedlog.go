package memoryservice

import (
	"context"
	"log/slog"
)

// boundedHandler cuts a log record's message and string attributes to
// maxLogField bytes: the log of a library that puts what a client sent
// into its lines (the MCP library's errors) stays bounded.
type boundedHandler struct{ slog.Handler }

func bounded(l *slog.Logger) *slog.Logger { return slog.New(boundedHandler{l.Handler()}) }

func (h boundedHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, truncate(r.Message, maxLogField), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(boundAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h boundedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	cut := make([]slog.Attr, len(as))
	for i, a := range as {
		cut[i] = boundAttr(a)
	}
	return boundedHandler{h.Handler.WithAttrs(cut)}
}

func (h boundedHandler) WithGroup(name string) slog.Handler {
	return boundedHandler{h.Handler.WithGroup(name)}
}

func boundAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, truncate(v.String(), maxLogField))
	case slog.KindGroup:
		g := v.Group()
		cut := make([]any, len(g))
		for i, ga := range g {
			cut[i] = boundAttr(ga)
		}
		return slog.Group(a.Key, cut...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, truncate(err.Error(), maxLogField))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
