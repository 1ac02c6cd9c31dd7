// Package coretest holds the model builders the core's tests share. It
// imports only the model, so every room's tests may use it.
package coretest
