package framework

import "go.uber.org/zap/zapcore"

type zapLevelT = zapcore.Level
