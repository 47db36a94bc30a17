// Package project finds and describes a wicket project: the operator's folder
// that holds wicket.toml, the strategies and indicators, settings/secrets.env
// and settings/state.
//
// It resolves which project a command works on (--project, then
// WICKET_PROJECT, then the nearest ancestor holding wicket.toml), parses
// wicket.toml into Config, reads node keys from the environment and
// secrets.env and the operator key pair from settings/operator.key and
// .pub (operator.go), and validates the bare names that users and agents pass
// (strategy, template, indicator, series, venue) before anything turns a name
// into a path.
//
// It is a leaf: it imports nothing else of wicket, so every domain package may
// use it. It must never print, never return a secret's value to anything but
// the caller that asked for that key, and never build a path from a name it has
// not validated.
package project
