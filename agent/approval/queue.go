package approval

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"
)

// socketPrefix and socketSuffix frame a server's socket name in the state
// directory: approve-<pid>.sock.
const (
	socketPrefix = "approve-"
	socketSuffix = ".sock"
)

// maxSocketPath is the longest unix socket path the kernel accepts (the
// size of sun_path, less its terminating NUL).
const maxSocketPath = 107

// ErrUnsigned is an answer that the operator key did not sign.
var ErrUnsigned = errors.New("this answer is not signed by the project's operator key (settings/operator.pub), so it is not taken and nothing was sent: " +
	"answer with `wicket approve`, which signs with settings/operator.key")

// ErrExpired is a decision that came after the request's deadline, or for
// a request that is no longer waiting.
var ErrExpired = errors.New("this command is no longer waiting (its window passed or it was decided already); nothing was sent")

// Decision is a person's answer to one request.
type Decision struct {
	Approved bool
	By       string // who decided: the operator's user, terminal and process
}

// Queue is one server process's waiting requests, served on a unix socket
// to `wicket approve`.
type Queue struct {
	path string
	ln   *net.UnixListener
	now  func() time.Time
	pid  int
	// operator verifies every answer (the operator's public key).
	operator ed25519.PublicKey

	mu      sync.Mutex
	waiting map[string]*waiter
	wg      sync.WaitGroup
}

type waiter struct {
	req Request
	ch  chan Decision // buffered, 1
}

// Listen creates dir/approve-<pid>.sock (mode 0600) and serves it until
// Close. now is the clock deadlines are read against; operator is the
// operator's public key, which every answer must be signed with.
func Listen(dir string, now func() time.Time, operator ed25519.PublicKey) (*Queue, error) {
	if now == nil {
		now = time.Now
	}
	if len(operator) != ed25519.PublicKeySize {
		return nil, errors.New("approval socket: no operator public key to verify answers with (settings/operator.pub)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("approval socket: %w", err)
	}
	pid := os.Getpid()
	path := filepath.Join(dir, socketPrefix+strconv.Itoa(pid)+socketSuffix)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("approval socket: the path %s is %d bytes, longer than the %d a unix socket allows; move the project to a shorter path",
			path, len(path), maxSocketPath)
	}
	_ = os.Remove(path) // a stale socket of an earlier process with this pid
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("approval socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("approval socket: %w", err)
	}
	q := &Queue{path: path, ln: ln, now: now, pid: pid, operator: operator, waiting: map[string]*waiter{}}
	q.wg.Add(1)
	go q.serve()
	return q, nil
}

// Path is the socket's path.
func (q *Queue) Path() string { return q.path }

// Close stops serving and removes the socket. Waiting requests time out.
func (q *Queue) Close() error {
	err := q.ln.Close()
	q.wg.Wait()
	_ = os.Remove(q.path)
	return err
}

// Wait puts r in the queue until a person decides, deadline passes or ctx
// ends. Only an explicit decision returns Approved; a deadline or a
// cancelled ctx return an error wrapping context.DeadlineExceeded or
// ctx's error.
func (q *Queue) Wait(ctx context.Context, r Request, deadline time.Time) (Decision, error) {
	r.Server = q.pid
	r.Expires = deadline
	w := &waiter{req: r, ch: make(chan Decision, 1)}
	q.mu.Lock()
	if _, dup := q.waiting[r.ID]; dup {
		q.mu.Unlock()
		return Decision{}, fmt.Errorf("approval: request %s is already waiting", r.ID)
	}
	q.waiting[r.ID] = w
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		delete(q.waiting, r.ID)
		q.mu.Unlock()
	}()
	wait := deadline.Sub(q.now())
	if wait <= 0 {
		return Decision{}, context.DeadlineExceeded
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case d := <-w.ch:
		return d, nil
	case <-timer.C:
		return Decision{}, context.DeadlineExceeded
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
}

// decide delivers a signed answer to a waiting request, once: by is who
// the operator says they are, sig the operator key's signature, and d
// what is delivered. An answer not signed for this very request leaves it
// waiting.
func (q *Queue) decide(id, by, sig string, d Decision) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.waiting[id]
	if !ok || !q.now().Before(w.req.Expires) {
		return ErrExpired
	}
	if !verifyAnswer(q.operator, w.req, d.Approved, by, sig) {
		return ErrUnsigned
	}
	delete(q.waiting, id)
	w.ch <- d // buffered: never blocks
	return nil
}

// list is the waiting requests, oldest deadline first.
func (q *Queue) list() []Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	out := []Request{}
	for _, w := range q.waiting {
		if now.Before(w.req.Expires) {
			out = append(out, w.req)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expires.Before(out[j].Expires) })
	return out
}

// The wire protocol: one JSON object a line each way.
type wireRequest struct {
	Op      string `json:"op"` // "list" or "decide"
	ID      string `json:"id,omitempty"`
	Approve bool   `json:"approve,omitempty"`
	By      string `json:"by,omitempty"`
	// Signature is the operator key's signature of the answer (SignAnswer).
	Signature string `json:"signature,omitempty"`
}

type wireResponse struct {
	Waiting []Request `json:"waiting,omitempty"`
	OK      bool      `json:"ok,omitempty"`
	Error   string    `json:"error,omitempty"`
}

func (q *Queue) serve() {
	defer q.wg.Done()
	for {
		c, err := q.ln.AcceptUnix()
		if err != nil {
			return
		}
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			q.conn(c)
		}()
	}
}

func (q *Queue) conn(c *net.UnixConn) {
	defer c.Close()
	uid, pid, err := peerOf(c)
	if err != nil || uid != os.Getuid() {
		return // only the operator's own user (the socket is 0600 as well)
	}
	br := bufio.NewReader(c)
	enc := json.NewEncoder(c)
	for {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Minute))
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var req wireRequest
		var resp wireResponse
		switch err := json.Unmarshal(line, &req); {
		case err != nil:
			resp.Error = "not a JSON request line"
		case req.Op == "list":
			resp.Waiting, resp.OK = q.list(), true
		case req.Op == "decide":
			by := fmt.Sprintf("%s (pid %d)", req.By, pid)
			if err := q.decide(req.ID, req.By, req.Signature, Decision{Approved: req.Approve, By: by}); err != nil {
				resp.Error = err.Error()
			} else {
				resp.OK = true
			}
		default:
			resp.Error = fmt.Sprintf("unknown op %q (list, decide)", req.Op)
		}
		if enc.Encode(resp) != nil {
			return
		}
	}
}
