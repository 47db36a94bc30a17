package research

import (
	"context"
	"errors"
	"fmt"

	"wicket/strategy/backtest"
	"wicket/strategy/history"
	"wicket/strategy/scriptapi"
	"wicket/strategy/worker"
)

// Kind classifies an Error. The data service maps each kind to an HTTP
// status and the Client maps it back, so a caller reads the same kind from
// Local and Client.
type Kind string

// Error kinds.
const (
	KindInvalid      Kind = "invalid"               // the request is wrong; Msg says which field and why
	KindNotFound     Kind = "not_found"             // no such strategy, series or history store
	KindTooMany      Kind = "too_many_combinations" // the grid is larger than the cap
	KindCanceled     Kind = "canceled"              // the caller cancelled before anything finished
	KindStrategy     Kind = "strategy"              // the strategy failed; Problem says where
	KindWorker       Kind = "worker"                // a worker process died (memory, CPU, crash) or could not start
	KindUnauthorized Kind = "unauthorized"          // the data service wants its bearer token
	KindUnavailable  Kind = "unavailable"           // the data service cannot be reached, or failed inside
)

// Error is the research API's error. Msg says what went wrong and what to
// do next; Problem carries a strategy error's position and hint.
type Error struct {
	Kind    Kind               `json:"kind"`
	Msg     string             `json:"message"`
	Problem *scriptapi.Problem `json:"problem,omitempty"`
	Err     error              `json:"-"`
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

func errorf(kind Kind, format string, a ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, a...)}
}

// classify turns an error from the layers below into an *Error, keeping
// its text and wrapping it.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var re *Error
	if errors.As(err, &re) {
		return err
	}
	out := &Error{Kind: KindUnavailable, Msg: err.Error(), Err: err}
	var se *scriptapi.Error
	var we *worker.Error
	var he *history.Error
	var be *backtest.Error
	switch {
	case errors.As(err, &se):
		p := se.Problem()
		out.Problem = &p
		out.Kind = KindStrategy
		if se.Kind == scriptapi.KindKnob {
			out.Kind = KindInvalid
		}
		if se.Kind == scriptapi.KindCanceled {
			out.Kind = KindCanceled
		}
		if se.Hint != "" {
			out.Msg += "; hint: " + se.Hint
		}
	case errors.As(err, &we):
		switch we.Kind {
		case worker.KindCanceled:
			out.Kind = KindCanceled
		case worker.KindRequest:
			out.Kind = KindInvalid
		default:
			out.Kind = KindWorker
		}
	case errors.As(err, &he):
		switch he.Kind {
		case history.KindNotFound:
			out.Kind = KindNotFound
		case history.KindInvalid:
			out.Kind = KindInvalid
		}
	case errors.As(err, &be):
		switch be.Kind {
		case backtest.KindInvalid:
			out.Kind = KindInvalid
		case backtest.KindCanceled:
			out.Kind = KindCanceled
		case backtest.KindStrategy:
			out.Kind = KindStrategy
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		out.Kind = KindCanceled
	}
	return out
}
