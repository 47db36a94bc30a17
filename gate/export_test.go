package gate

// Outstanding is the number of unexpired previews waiting for a confirm:
// what the tests hold the gate's bookkeeping to (nothing in production
// needs the count).
func (p *PendingPreviews[C]) Outstanding() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sweepAll(p.now())
	return len(p.pending)
}
