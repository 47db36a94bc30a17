package worker

import "fmt"

// Kind classifies an Error.
type Kind string

// Error kinds.
const (
	KindMemory   Kind = "memory"   // the worker hit its address-space limit and died
	KindCPU      Kind = "cpu"      // the worker hit its CPU-time limit and died
	KindCrashed  Kind = "crashed"  // the worker died for another reason
	KindCanceled Kind = "canceled" // the caller's context ended; the worker was stopped
	KindStart    Kind = "start"    // a worker could not be started
	KindRequest  Kind = "request"  // the request was malformed or of an unknown kind
	KindHandler  Kind = "handler"  // the handler failed (not in strategy code)
	KindStrategy Kind = "strategy" // the strategy failed; the wire carries a *script.Error
	KindClosed   Kind = "closed"   // the pool is closed
)

// Error is a failure of the worker machinery or of a worker, as opposed to
// a strategy error (a *script.Error, returned as is). Read it with
// errors.As.
type Error struct {
	Kind Kind
	Msg  string
	err  error
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.err }

func fmtBytes(b uint64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", b>>30)
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%d MiB", b>>20)
	}
}
