package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"wicket/node"
	"wicket/node/command"
	"wicket/node/journal"
)

// The node's HTTP API: handlers only authenticate (auth.go), decode,
// enqueue onto the fold and wait.

// statusOf is the one place node errors become HTTP statuses.
var statusOf = map[node.Kind]int{
	node.KindAuth:        http.StatusUnauthorized,
	node.KindForbidden:   http.StatusForbidden,
	node.KindBadRequest:  http.StatusBadRequest,
	node.KindNotFound:    http.StatusNotFound,
	node.KindRejected:    http.StatusConflict,
	node.KindTimeout:     http.StatusGatewayTimeout,
	node.KindUnavailable: http.StatusServiceUnavailable,
	node.KindInternal:    http.StatusInternalServerError,
}

// Handler is the node's HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", s.health)
	mux.HandleFunc("GET /v1/snapshot", s.snapshot)
	mux.HandleFunc("POST /v1/dry-run", s.dryRun)
	mux.HandleFunc("POST /v1/commands", s.commands)
	mux.HandleFunc("GET /v1/tickets/{id}", s.ticket)
	mux.HandleFunc("GET /v1/audit", s.audit)
	mux.HandleFunc("GET /v1/venues/{name}/arming", s.arming)
	mux.HandleFunc("POST /v1/venues/{name}/arm", s.arm)
	mux.HandleFunc("POST /v1/venues/{name}/disarm", s.disarm)
	mux.HandleFunc("GET /v1/venues/{name}/breaker", s.breakerGet)
	mux.HandleFunc("POST /v1/venues/{name}/breaker/clear", s.breakerClear)
	mux.HandleFunc("GET /v1/risk", s.riskGet)
	mux.HandleFunc("GET /v1/risk/challenge", s.riskChallenge)
	mux.HandleFunc("POST /v1/risk/reset-throttle", s.riskReset)
	mux.HandleFunc("POST /v1/risk/override", s.riskOverride) // override.go
	mux.HandleFunc("POST /v1/kill", s.kill)
	mux.HandleFunc("POST /v1/resume-trading", s.resumeTrading)
	mux.HandleFunc("POST /v1/heartbeat", s.heartbeatPost)
	mux.HandleFunc("POST "+node.LedgerHeadsPath, s.ledgerHeadPost) // ledger_head.go
	mux.HandleFunc("GET "+node.LedgerHeadsPath, s.ledgerHeadsGet)
	s.mountDeployments(mux)
	s.mountAlerts(mux) // alerts.go: GET /v1/alerts, GET /v1/statement
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, node.Errorf(node.KindNotFound, "no_endpoint",
			"no endpoint %s %s; the node serves GET /v1/health, GET /v1/snapshot, POST /v1/dry-run, POST /v1/commands, GET /v1/tickets/{id}, GET /v1/audit", r.Method, r.URL.Path))
	})
	return s.authenticate(mux)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"kind":"internal","message":"cannot encode the answer"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(data, '\n')) //nolint:errcheck // the client went away
}

func writeError(w http.ResponseWriter, e *node.Error) {
	status, ok := statusOf[e.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, map[string]*node.Error{"error": e})
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	h, err := s.readHealth(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) snapshot(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	events := -1 // the default
	if v := q.Get("events"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_events", "events=%q: give a count from 0 to %d", short(v), maxEvents))
			return
		}
		events = n
	}
	snap, err := s.readSnapshot(r.Context(), q.Get("venue"), events)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// readEnvelope decodes a request body strictly.
func readEnvelope(r *http.Request) (command.Envelope, *node.Error) {
	body, _ := io.ReadAll(r.Body) // already read and bounded by authenticate
	return decodeEnvelope(body)
}

func (s *Server) dryRun(w http.ResponseWriter, r *http.Request) {
	env, berr := readEnvelope(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	keyID, _ := r.Context().Value(keyIDContext{}).(string)
	v, err := s.dryRunOf(r.Context(), keyID, env)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) commands(w http.ResponseWriter, r *http.Request) {
	env, berr := readEnvelope(r)
	if berr != nil {
		writeError(w, berr)
		return
	}
	keyID, _ := r.Context().Value(keyIDContext{}).(string)
	id, cid, err := s.submit(keyID, env)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"ticket": id, "client_order_id": cid})
}

func (s *Server) ticket(w http.ResponseWriter, r *http.Request) {
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_wait", "wait=%q: give a duration such as 2s (at most %s)", short(v), maxWait))
			return
		}
		wait = d
	}
	out, err := s.readTicket(r.Context(), r.PathValue("id"), wait)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var aq node.AuditQuery
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_since", "since=%q: give an RFC 3339 time such as 2025-01-02T15:04:05Z", short(v)))
			return
		}
		aq.Since = t
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_after", "after=%q: give an audit sequence number", short(v)))
			return
		}
		aq.After = n
	}
	aq.ClientOrderID = q.Get("client_order_id")
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, node.Errorf(node.KindBadRequest, "bad_limit", "limit=%q: give a count from 1 to %d", short(v), journal.MaxAuditLimit))
			return
		}
		aq.Limit = n
	}
	page, err := s.readAudit(aq)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}
