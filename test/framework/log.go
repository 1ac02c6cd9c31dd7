package framework

import (
	"strings"
	"sync/atomic"

	"go.uber.org/zap/zapcore"
)

type zapLevelT = zapcore.Level

// conflictErrors counts error-level log lines caused by write conflicts:
// the reliability suite fails on them, since a conflict is a normal event
// that must be retried quietly.
var conflictErrors atomic.Int64

// ConflictErrors returns how many error-level conflict log lines the
// managers of this test process wrote so far.
func ConflictErrors() int64 { return conflictErrors.Load() }

// errorRecorder wraps the log core to count conflict errors.
type errorRecorder struct{ zapcore.Core }

func (e *errorRecorder) With(fields []zapcore.Field) zapcore.Core {
	return &errorRecorder{Core: e.Core.With(fields)}
}

func (e *errorRecorder) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Enabled(ent.Level) {
		return ce.AddCore(ent, e)
	}
	return ce
}

func (e *errorRecorder) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	if ent.Level >= zapcore.ErrorLevel {
		for _, f := range fields {
			if err, ok := f.Interface.(error); ok && f.Type == zapcore.ErrorType &&
				strings.Contains(err.Error(), "the object has been modified") {
				conflictErrors.Add(1)
			}
		}
	}
	return e.Core.Write(ent, fields)
}
