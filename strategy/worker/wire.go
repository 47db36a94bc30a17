package worker

// ToWire is err as it crosses a wire other than the worker pipe (a
// research cluster's reply subject): the same form, read back with Err.
func ToWire(err error) *WireError { return toWire(err) }

// Err is the error w carries, of the type it had on the other side.
func (w *WireError) Err() error { return w.err() }
