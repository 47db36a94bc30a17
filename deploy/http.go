package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"unicode"

	"wicket/node"
)

// Handler is the deployments' surface over the node's HTTP, mounted at
// /v1/deployments behind the node's authentication (observe key reads,
// control key writes; the operator's signature for arm, resume and
// approve, checked here). It answers 503 until Attach gives it its
// Runner, which needs the node it is mounted in to be listening first:
// deployments_starting (retry shortly) once Starting says one is being
// built, deployments_failed once Failed says it could not be, and
// deployments_off when the node runs none.
type Handler struct {
	r   atomic.Pointer[Runner]
	why atomic.Pointer[node.Error] // the answer while there is no runner; nil: off
	mux *http.ServeMux
}

// The answers while the surface has no runner.
var (
	errDeploymentsOff = node.Errorf(node.KindUnavailable, "deployments_off",
		"this node runs no deployments: wicket node serve runs them when the project has strategies (see its log)")
	errDeploymentsStarting = node.Errorf(node.KindUnavailable, "deployments_starting",
		"this node's deployments are starting (they start once the node listens); retry in a moment")
	errDeploymentsFailed = node.Errorf(node.KindUnavailable, "deployments_failed",
		"this node's deployments did not start: its log (wicket node serve's stderr) says why; fix that and restart the node")
)

// Starting says a runner is being built: until Attach (or Failed) the
// surface answers deployments_starting, with a Retry-After of a second.
func (h *Handler) Starting() { h.why.Store(errDeploymentsStarting) }

// Failed says the runner could not be built; the node's log says why.
func (h *Handler) Failed() { h.why.Store(errDeploymentsFailed) }

// NewHandler returns the surface, without a runner yet.
func NewHandler() *Handler {
	h := &Handler{mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /v1/deployments", h.list)
	h.mux.HandleFunc("POST /v1/deployments", h.create)
	h.mux.HandleFunc("POST /v1/deployments/check", h.check)
	h.mux.HandleFunc("GET /v1/deployments/{id}", h.show)
	h.mux.HandleFunc("POST /v1/deployments/{id}/stop", h.stop)
	h.mux.HandleFunc("GET /v1/deployments/{id}/challenge", h.challenge)
	h.mux.HandleFunc("GET /v1/deployments/{id}/report", h.report)
	h.mux.HandleFunc("POST /v1/deployments/{id}/{act}", h.operator)
	h.mux.HandleFunc("GET /v1/deployments/proposals/{cid}/challenge", h.challenge)
	h.mux.HandleFunc("POST /v1/deployments/proposals/{cid}/approve", h.approve)
	h.mux.HandleFunc("POST /v1/deployments/proposals/{cid}/elicited", h.elicited)
	h.mux.HandleFunc("/v1/deployments/", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, errorf(KindNotFound, "no deployments endpoint %s %s; see docs/deployments.md", r.Method, r.URL.Path))
	})
	return h
}

// Attach gives the surface its runner.
func (h *Handler) Attach(r *Runner) { h.r.Store(r) }

// ServeHTTP serves the deployments' endpoints.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.r.Load() == nil {
		why := h.why.Load()
		if why == nil {
			why = errDeploymentsOff
		}
		if why == errDeploymentsStarting {
			w.Header().Set("Retry-After", "1")
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]*node.Error{"error": why})
		return
	}
	h.mux.ServeHTTP(w, r)
}

// Detail is one deployment with its recent decisions and intents.
type Detail struct {
	Deployment Deployment `json:"deployment"`
	Decisions  []Decision `json:"decisions"`
	Intents    []Intent   `json:"intents"`
}

// detailRows is how many of the latest decisions and intents a Detail
// carries.
const detailRows = 50

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string][]Deployment{"deployments": h.r.Load().List()})
}

func (h *Handler) show(w http.ResponseWriter, r *http.Request) {
	run := h.r.Load()
	id, err := cleanID(r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	d, err := run.Get(id)
	if err != nil {
		writeErr(w, err)
		return
	}
	decs, err := run.cfg.Store.Decisions(id)
	if err != nil {
		writeErr(w, errorf(KindInternal, "%v", err))
		return
	}
	ins, err := run.cfg.Store.Intents(id)
	if err != nil {
		writeErr(w, errorf(KindInternal, "%v", err))
		return
	}
	writeJSON(w, http.StatusOK, Detail{Deployment: d, Decisions: tail(decs, detailRows), Intents: tail(ins, detailRows)})
}

func (h *Handler) report(w http.ResponseWriter, r *http.Request) {
	id, err := cleanID(r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	rep, err := h.r.Load().Report(r.Context(), id)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func tail[T any](s []T, n int) []T {
	if s == nil {
		return []T{}
	}
	return s[max(0, len(s)-n):]
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	var spec Spec
	if err := decode(r, &spec); err != nil {
		writeErr(w, err)
		return
	}
	spec.CreatedBy = r.Header.Get(node.HeaderKey) // authenticated by the node before the request reached here
	d, err := h.r.Load().Create(r.Context(), spec)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, d)
}

func (h *Handler) check(w http.ResponseWriter, r *http.Request) {
	var spec Spec
	if err := decode(r, &spec); err != nil {
		writeErr(w, err)
		return
	}
	d, err := h.r.Load().Check(r.Context(), spec)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (h *Handler) stop(w http.ResponseWriter, r *http.Request) {
	id, err := cleanID(r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	var req StopRequest
	if err := decodeOptional(r, &req); err != nil {
		writeErr(w, err)
		return
	}
	why, err := stopReason(req.Reason)
	if err != nil {
		writeErr(w, err)
		return
	}
	d, err := h.r.Load().Stop(id, caller(r)+why)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// StopRequest is the body of a stop: why, in the caller's words (kept in
// the deployment's reason and the node's log).
type StopRequest struct {
	Reason string `json:"reason,omitempty"`
}

// MaxStopReason bounds a stop's reason.
const MaxStopReason = 200

// stopReason checks a stop's reason: printable text, at most
// MaxStopReason characters; "" for none.
func stopReason(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if len(s) > MaxStopReason || strings.IndexFunc(s, func(c rune) bool { return !unicode.IsPrint(c) }) >= 0 {
		return "", errorf(KindBadRequest, "reason: give at most %d printable characters saying why the deployment stops", MaxStopReason)
	}
	return ": " + s, nil
}

// caller says who asked, as the node authenticated it: the key id the
// request was signed with and the endpoint it reached.
func caller(r *http.Request) string {
	key := r.Header.Get(node.HeaderKey)
	if key == "" {
		key = "unknown"
	}
	return fmt.Sprintf("by key %s via %s %s", key, r.Method, r.URL.Path)
}

// Challenge is a fresh operator challenge.
type Challenge struct {
	Challenge string `json:"challenge"`
}

func (h *Handler) challenge(w http.ResponseWriter, r *http.Request) {
	act, name := r.URL.Query().Get("act"), r.PathValue("id")
	if cid := r.PathValue("cid"); cid != "" {
		act, name = ActApprove, cid
	} else if _, err := cleanID(name); err != nil {
		writeErr(w, err)
		return
	}
	c, err := h.r.Load().Challenge(act, name)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, Challenge{Challenge: c})
}

func (h *Handler) operator(w http.ResponseWriter, r *http.Request) {
	id, err := cleanID(r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	var req node.ArmRequest
	if err := decode(r, &req); err != nil {
		writeErr(w, err)
		return
	}
	var d Deployment
	switch r.PathValue("act") {
	case ActArm:
		d, err = h.r.Load().Arm(id, req)
	case ActArmWithoutPlan:
		d, err = h.r.Load().ArmWithoutPlan(id, req)
	case ActResume:
		d, err = h.r.Load().Resume(id, req)
	case ActApproveNext:
		d, err = h.r.Load().ApproveNext(id, req)
	default:
		err = errorf(KindNotFound, "no deployments endpoint POST %s: stop, arm, resume or approve-next", r.URL.Path)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (h *Handler) approve(w http.ResponseWriter, r *http.Request) {
	var req node.ArmRequest
	if err := decode(r, &req); err != nil {
		writeErr(w, err)
		return
	}
	in, err := h.r.Load().Approve(r.Context(), r.PathValue("cid"), req, caller(r))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, in)
}

// Elicited is the word of a `wicket mcp --approval elicit` server that
// the person its client asked accepted a proposal.
type Elicited struct {
	By string `json:"by,omitempty"` // who answered, as the client names them
}

func (h *Handler) elicited(w http.ResponseWriter, r *http.Request) {
	var req Elicited
	if err := decode(r, &req); err != nil {
		writeErr(w, err)
		return
	}
	in, err := h.r.Load().ApproveElicited(r.Context(), r.PathValue("cid"), r.Header.Get(node.HeaderKey), req.By, caller(r))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, in)
}

// decodeOptional is decode for a body that may be empty.
func decodeOptional(r *http.Request, v any) error {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decode(r, v)
}

func decode(r *http.Request, v any) error {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(KindBadRequest, "request body: %v", err)
	}
	return nil
}

// statusOf maps an Error's kind to the node's HTTP status and kind.
var statusOf = map[Kind]struct {
	status int
	kind   node.Kind
}{
	KindBadRequest: {http.StatusBadRequest, node.KindBadRequest},
	KindNotFound:   {http.StatusNotFound, node.KindNotFound},
	KindForbidden:  {http.StatusForbidden, node.KindForbidden},
	KindConflict:   {http.StatusConflict, node.KindRejected},
	KindInternal:   {http.StatusInternalServerError, node.KindInternal},
}

// writeErr answers err in the node's error shape, which node.Client reads.
func writeErr(w http.ResponseWriter, err error) {
	var de *Error
	if !errors.As(err, &de) {
		de = errorf(KindInternal, "%v", err)
	}
	m, ok := statusOf[de.Kind]
	if !ok {
		m = statusOf[KindInternal]
	}
	writeJSON(w, m.status, map[string]*node.Error{"error": {Kind: m.kind, Code: "deployment_" + string(de.Kind), Message: de.Msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":{"kind":"internal","message":"cannot encode the answer"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(data, '\n')) //nolint:errcheck // the client went away
}
