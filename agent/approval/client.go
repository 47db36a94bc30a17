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
	"strings"
	"syscall"
	"time"
)

// Waiting is a request together with the socket of the server it waits in.
type Waiting struct {
	Request
	Socket string `json:"socket"`
}

// Sockets lists the approval sockets in dir (the project's settings/state).
func Sockets(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, socketPrefix+"*"+socketSuffix))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	return paths, nil
}

// List asks every server with a socket in dir for its waiting requests,
// soonest deadline first. A socket nobody listens on any more (its server
// died) is removed; other unreachable servers are reported in errs.
func List(ctx context.Context, dir string) (out []Waiting, errs []error) {
	paths, err := Sockets(dir)
	if err != nil {
		return nil, []error{err}
	}
	for _, p := range paths {
		resp, err := exchange(ctx, p, wireRequest{Op: "list"})
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				_ = os.Remove(p) // stale: its server is gone
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(p), err))
			continue
		}
		for _, r := range resp.Waiting {
			out = append(out, Waiting{Request: r, Socket: p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expires.Before(out[j].Expires) })
	return out, errs
}

// Decide sends one decision on w, signed with the operator's private key,
// to the server waiting on w.Socket. by names the person (the server adds
// the deciding process's id). ErrExpired-like answers come back as errors
// with the server's text.
func Decide(ctx context.Context, w Waiting, approve bool, by string, key ed25519.PrivateKey) error {
	resp, err := exchange(ctx, w.Socket, wireRequest{Op: "decide", ID: w.ID, Approve: approve, By: by, Signature: SignAnswer(key, w.Request, approve, by)})
	if err != nil {
		return err
	}
	if !resp.OK {
		return errors.New(resp.Error)
	}
	return nil
}

func exchange(ctx context.Context, socket string, req wireRequest) (wireResponse, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return wireResponse{}, err
	}
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = c.SetDeadline(deadline)
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return wireResponse{}, err
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return wireResponse{}, fmt.Errorf("no answer from the server: %w", err)
	}
	var resp wireResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		return wireResponse{}, fmt.Errorf("unreadable answer %q", strings.TrimSpace(string(line)))
	}
	if resp.Error != "" && req.Op == "list" {
		return resp, errors.New(resp.Error)
	}
	return resp, nil
}
