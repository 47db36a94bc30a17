//go:build !unix

package handlers

import "wicket/strategy/ta"

// sharedColumns cannot map files here: every worker computes its own
// columns.
type sharedColumns struct{ links func() string }

func newSharedColumns(int) *sharedColumns { return &sharedColumns{} }

func (*sharedColumns) setDir(string) {}
func (*sharedColumns) readOnlyNow()  {}

func (*sharedColumns) reserve(int) error { return errNoMmap }

func (*sharedColumns) Take(ta.Key) (ta.Result, bool, func(*ta.Result) bool) {
	return ta.Result{}, false, func(*ta.Result) bool { return false }
}

func (*sharedColumns) full(int) bool { return false }
func (*sharedColumns) reset()        {}
