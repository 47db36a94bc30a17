package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wicket/strategy/worker"
)

// shipped is a kind of object a sweep ships to the cluster by the
// SHA-256 of its content (bars, funding), as its errors name it.
type shipped struct {
	ext, what, are, their, them string
}

var (
	shippedBars    = shipped{ext: ".bars", what: "bars", are: "are", their: "their", them: "them"}
	shippedFunding = shipped{ext: ".funding", what: "funding", are: "is", their: "its", them: "it"}
)

// barsFile is the local copy of the bars of digest, fetched from the
// cluster the first time this machine needs them. With wait (a chunk's
// bars), bars the store does not hold yet are waited for, up to
// shippedWait: a sweep queues its first chunks while it puts their bars
// in the store (Dispatcher.Warm), and stops them should that fail.
func (w *Worker) barsFile(ctx context.Context, digest string, wait bool) (string, error) {
	return w.shippedFile(ctx, shippedBars, digest, wait)
}

// fundingFile is the local copy of the funding of digest
// (worker.Funding.Encode), fetched from the cluster the first time this
// machine needs it. Like bars, it is refused unless it hashes to its
// name, which the signed chunk carries.
func (w *Worker) fundingFile(ctx context.Context, digest string) (string, error) {
	return w.shippedFile(ctx, shippedFunding, digest, false)
}

// shippedWait bounds a chunk's wait for bars its sweep is still putting
// in the store.
const shippedWait = time.Minute

// shippedFile is the local copy of the object of kind k named digest;
// with wait, one the store does not hold yet is waited for (barsFile).
func (w *Worker) shippedFile(ctx context.Context, k shipped, digest string, wait bool) (string, error) {
	if len(digest) != 64 {
		return "", &worker.Error{Kind: worker.KindRequest, Msg: "a cluster chunk without a " + k.what + " digest"}
	}
	if _, err := hex.DecodeString(digest); err != nil {
		return "", &worker.Error{Kind: worker.KindRequest, Msg: "a cluster chunk with a malformed " + k.what + " digest"}
	}
	path := filepath.Join(w.o.CacheDir, digest+k.ext)
	gctx, cancel := context.WithTimeout(ctx, shippedWait)
	defer cancel()
	pause := 2 * time.Millisecond
	waited := false
	for {
		if k == shippedBars {
			// Bars being pushed are waited for, not fetched from the store
			// meanwhile.
			if arrived := w.pushing(digest); arrived != nil {
				select {
				case <-gctx.Done():
					return "", &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("wait for the bars %s pushed by the sweep: %v", digest[:12], context.Cause(gctx))}
				case <-arrived:
				}
			}
		}
		found, err := w.fetchShipped(gctx, k, digest, path)
		if found || !wait {
			return path, err
		}
		if !waited {
			waited = true
			fmt.Fprintf(w.o.Log, "wicket worker: %s %s: not in the research cluster's store yet; waiting for the sweep's upload\n", k.what, digest[:12])
		}
		// Checked again after a pause, for the file too: pushed bars
		// (onPush) land there meanwhile.
		select {
		case <-gctx.Done():
			return "", err
		case <-time.After(pause):
		}
		pause = min(2*pause, 250*time.Millisecond)
	}
}

// fetchShipped makes path the local copy of the object of kind k named
// digest, unless it is there: found is false, with an error, when the
// store does not hold it.
func (w *Worker) fetchShipped(ctx context.Context, k shipped, digest, path string) (found bool, err error) {
	w.barsMu.Lock()
	defer w.barsMu.Unlock()
	if _, err := os.Stat(path); err == nil {
		return true, nil
	}
	got, err := w.obj.Get(ctx, digest)
	if err != nil {
		return !errors.Is(err, jetstream.ErrObjectNotFound), &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("fetch %s %s from the research cluster: %v", k.what, digest[:12], err)}
	}
	copying := false
	defer func() {
		if !copying {
			got.Close() // else copyUntil closes it
		}
	}()
	// The store checks what it hands out against the SHA-256 digest it
	// holds for the object; that digest must be the name's.
	info, err := got.Info()
	if err != nil {
		return true, &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("fetch %s %s from the research cluster: %v", k.what, digest[:12], err)}
	}
	want, _ := hex.DecodeString(digest)
	if sum, err := jetstream.DecodeObjectDigest(info.Digest); err != nil || !bytes.Equal(sum, want) {
		return true, &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("the %s %s in the research cluster %s not what %s name says; ship %s again", k.what, digest[:12], k.are, k.their, k.them)}
	}
	tmp, err := os.CreateTemp(w.o.CacheDir, digest+".*.tmp")
	if err != nil {
		return true, fmt.Errorf("cache %s: %w", k.what, err)
	}
	// A large buffer moves a whole store chunk at a time; the wrapper
	// keeps the file's ReadFrom, and its small buffer, out of the way.
	copying = true
	n, err := copyUntil(ctx, struct{ io.Writer }{tmp}, got, make([]byte, 256<<10))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && uint64(n) != info.Size {
		err = fmt.Errorf("got %d of %d bytes", n, info.Size)
	}
	if err != nil {
		os.Remove(tmp.Name())
		if errors.Is(err, jetstream.ErrDigestMismatch) {
			return true, &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("the %s %s fetched from the research cluster %s damaged", k.what, digest[:12], k.are)}
		}
		return true, &worker.Error{Kind: worker.KindStart, Msg: fmt.Sprintf("fetch %s %s from the research cluster: %v", k.what, digest[:12], err)}
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return true, fmt.Errorf("cache %s: %w", k.what, err)
	}
	fmt.Fprintf(w.o.Log, "wicket worker: %s %s fetched (%d bytes)\n", k.what, digest[:12], n)
	return true, nil
}

// copyUntil copies src to dst as io.CopyBuffer does, and closes src
// when the copy ends, but returns ctx's error as soon as ctx ends. The
// object store's reader notices a cancelled context only when its read
// deadline passes (the whole fetch's bound, shippedWait) and holds its
// lock meanwhile, so its Close would wait as long: a worker stopped in
// the middle of a fetch waited a minute to give its chunks back. The
// copy left behind ends at that deadline, or at once when dst, which the
// caller closes, refuses the next write.
func copyUntil(ctx context.Context, dst io.Writer, src io.ReadCloser, buf []byte) (int64, error) {
	type copied struct {
		n   int64
		err error
	}
	done := make(chan copied, 1)
	go func() {
		n, err := io.CopyBuffer(dst, src, buf)
		src.Close()
		done <- copied{n, err}
	}()
	select {
	case c := <-done:
		return c.n, c.err
	case <-ctx.Done():
		return 0, context.Cause(ctx)
	}
}

// onPush keeps bars a sweep pushed to the workers (Dispatcher.push):
// the bars, and a signed barsNote that names them. They are kept only if
// the note's signature verifies and they hash to the digest it names.
// Bars this machine holds already are not written again.
func (w *Worker) onPush(m *nats.Msg) {
	raw := []byte(m.Header.Get(headerNote))
	if len(raw) == 0 || m.Header.Get(headerProtocol) != protocol || !w.genuineFrame(m.Subject, m.Header, raw) {
		return
	}
	var note barsNote
	if json.Unmarshal(raw, &note) != nil || len(note.Digest) != 64 {
		return
	}
	done := w.arriving(note.Digest)
	defer done()
	switch err := w.keep(shippedBars, note.Digest, m.Data); {
	case errors.Is(err, errNotTheirDigest):
		fmt.Fprintf(w.o.Log, "wicket worker: bars %s pushed by a sweep do not hash to their name; ignored (the chunks fetch them from the store)\n", note.Digest[:12])
	case err != nil:
		fmt.Fprintf(w.o.Log, "wicket worker: bars %s pushed by a sweep: %v\n", note.Digest[:12], err)
	}
}

// arriving notes that the bars of digest are being pushed to this
// worker (onPush): a chunk that needs them waits for them (pushing)
// rather than fetching them from the store meanwhile. done says they are
// kept, or not.
func (w *Worker) arriving(digest string) (done func()) {
	ch := make(chan struct{})
	w.pushMu.Lock()
	if w.pushes == nil {
		w.pushes = map[string]chan struct{}{}
	}
	if _, ok := w.pushes[digest]; ok {
		w.pushMu.Unlock()
		return func() {} // pushed twice at once: the first keeps them
	}
	w.pushes[digest] = ch
	w.pushMu.Unlock()
	return func() {
		w.pushMu.Lock()
		delete(w.pushes, digest)
		w.pushMu.Unlock()
		close(ch)
	}
}

// pushing is closed once the bars of digest being pushed to this worker
// are kept, or not; nil when none are being pushed.
func (w *Worker) pushing(digest string) <-chan struct{} {
	w.pushMu.Lock()
	defer w.pushMu.Unlock()
	return w.pushes[digest]
}

// errNotTheirDigest is keep's error for data that do not hash to the
// digest they came under.
var errNotTheirDigest = errors.New("they do not hash to their name")

// keep makes data the local copy of the object of kind k named digest,
// unless there is one, if data hash to digest. They are written to a
// temporary file while they are hashed, and the file takes the digest's
// name only once they hash to it: a chunk that waits for them waits for
// the longer of the two, not for both.
func (w *Worker) keep(k shipped, digest string, data []byte) error {
	path := filepath.Join(w.o.CacheDir, digest+k.ext)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	type staged struct {
		name string
		err  error
	}
	wrote := make(chan staged, 1)
	go func() {
		tmp, err := os.CreateTemp(w.o.CacheDir, digest+".*.tmp")
		if err != nil {
			wrote <- staged{err: err}
			return
		}
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		wrote <- staged{tmp.Name(), err}
	}()
	sum := sha256.Sum256(data)
	s := <-wrote
	if hex.EncodeToString(sum[:]) != digest {
		if s.name != "" {
			os.Remove(s.name)
		}
		return errNotTheirDigest
	}
	err := s.err
	if err == nil {
		w.barsMu.Lock()
		defer w.barsMu.Unlock()
		if _, serr := os.Stat(path); serr != nil {
			if err = os.Rename(s.name, path); err == nil {
				fmt.Fprintf(w.o.Log, "wicket worker: %s %s pushed (%d bytes)\n", k.what, digest[:12], len(data))
				return nil
			}
		}
	}
	if s.name != "" {
		os.Remove(s.name)
	}
	if err != nil {
		return fmt.Errorf("cache %s: %w", k.what, err)
	}
	return nil
}

// maxRan bounds the chunk ids a worker remembers running; past it the
// expired ones go first, then any.
const maxRan = 1 << 20

// ranBefore reports whether this worker answered chunk, or saw it
// cancelled, already: a copy of it published again is not run.
func (w *Worker) ranBefore(chunk string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.ran[chunk]
	return ok
}

// markRan remembers d's chunk as run here until the chunk expires.
func (w *Worker) markRan(d *delivery) {
	until := time.UnixMilli(expiresAt(d.header))
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ran) >= maxRan {
		now := w.sig.now()
		for id, t := range w.ran {
			if now.After(t) {
				delete(w.ran, id)
			}
		}
		for id := range w.ran {
			if len(w.ran) < maxRan {
				break
			}
			delete(w.ran, id)
		}
	}
	w.ran[d.chunk] = until
}
