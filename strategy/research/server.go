package research

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Service is the research API as the data service serves it. *Local
// implements it, and so does *Client, which is how a caller can swap one
// for the other.
type Service interface {
	ListSeries(ctx context.Context) (SeriesList, error)
	ListStrategies(ctx context.Context) (StrategyList, error)
	Backtest(ctx context.Context, req BacktestRequest) (BacktestResult, error)
	Sweep(ctx context.Context, req SweepRequest, progress func(Progress)) (SweepResult, error)
	WalkForward(ctx context.Context, req WalkForwardRequest, progress func(Progress)) (WalkForwardResult, error)
	Optimize(ctx context.Context, req OptimizeRequest, progress func(Progress)) (OptimizeResult, error)
}

var _ Service = (*Local)(nil)

// The data service's endpoints.
const (
	PathSeries      = "/v1/series"       // GET → SeriesList
	PathStrategies  = "/v1/strategies"   // GET → StrategyList
	PathBacktest    = "/v1/backtest"     // POST BacktestRequest → BacktestResult
	PathSweep       = "/v1/sweep"        // POST SweepRequest → NDJSON stream ending in a SweepResult
	PathWalkForward = "/v1/walk-forward" // POST WalkForwardRequest → NDJSON stream ending in a WalkForwardResult
	PathOptimize    = "/v1/optimize"     // POST OptimizeRequest → NDJSON stream ending in an OptimizeResult
	PathCancel      = "/v1/cancel/"      // POST /v1/cancel/{job}: a streaming request returns what finished
)

// JobHeader names a streaming request's job id, for PathCancel.
const JobHeader = "Wicket-Job"

// maxRequestBytes bounds a request body (a strategy's source is at most
// 1 MiB).
const maxRequestBytes = 4 << 20

// streamLine is one line of a streaming response: progress, then exactly
// one result or error.
type streamLine struct {
	Progress *Progress       `json:"progress,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    *Error          `json:"error,omitempty"`
}

// ServerOptions configure NewServer.
type ServerOptions struct {
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN).
	Token string
	// NewID mints job ids; nil means 16 random bytes in hex.
	NewID func() string
	// Log receives one line per request; nil discards them.
	Log *slog.Logger
	// Now times requests for the log; nil means time.Now.
	Now func() time.Time
}

// server is the data service's http.Handler.
type server struct {
	svc  Service
	opts ServerOptions
	mux  *http.ServeMux

	mu   sync.Mutex
	jobs map[string]context.CancelCauseFunc
}

// NewServer serves svc over HTTP/JSON. Sweeps and walk-forward analyses
// stream newline-delimited JSON: progress lines, then one result (or
// error) line. They stop when the client closes the request, and a POST to
// PathCancel + the job id (from the JobHeader response header) stops one
// and lets it return what finished. Errors are JSON {"error": {...}} with
// the status of their kind.
func NewServer(svc Service, opts ServerOptions) http.Handler {
	if opts.NewID == nil {
		opts.NewID = randomID
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	s := &server{svc: svc, opts: opts, mux: http.NewServeMux(), jobs: map[string]context.CancelCauseFunc{}}
	s.mux.HandleFunc("GET "+PathSeries, func(w http.ResponseWriter, r *http.Request) {
		out, err := svc.ListSeries(r.Context())
		reply(w, out, err)
	})
	s.mux.HandleFunc("GET "+PathStrategies, func(w http.ResponseWriter, r *http.Request) {
		out, err := svc.ListStrategies(r.Context())
		reply(w, out, err)
	})
	s.mux.HandleFunc("POST "+PathBacktest, func(w http.ResponseWriter, r *http.Request) {
		var req BacktestRequest
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		out, err := svc.Backtest(r.Context(), req)
		reply(w, out, err)
	})
	s.mux.HandleFunc("POST "+PathSweep, func(w http.ResponseWriter, r *http.Request) {
		var req SweepRequest
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		s.stream(w, r, func(ctx context.Context, progress func(Progress)) (any, error) {
			return svc.Sweep(ctx, req, progress)
		})
	})
	s.mux.HandleFunc("POST "+PathOptimize, func(w http.ResponseWriter, r *http.Request) {
		var req OptimizeRequest
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		s.stream(w, r, func(ctx context.Context, progress func(Progress)) (any, error) {
			return svc.Optimize(ctx, req, progress)
		})
	})
	s.mux.HandleFunc("POST "+PathWalkForward, func(w http.ResponseWriter, r *http.Request) {
		var req WalkForwardRequest
		if err := decodeBody(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
		s.stream(w, r, func(ctx context.Context, progress func(Progress)) (any, error) {
			return svc.WalkForward(ctx, req, progress)
		})
	})
	s.mux.HandleFunc("POST "+PathCancel+"{job}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		cancel, ok := s.jobs[r.PathValue("job")]
		s.mu.Unlock()
		if !ok {
			writeError(w, errorf(KindNotFound, "no running job %q: it finished, or was never started here", r.PathValue("job")))
			return
		}
		cancel(errors.New("cancelled by the client"))
		reply(w, struct {
			Canceled bool `json:"canceled"`
		}{true}, nil)
	})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(KindNotFound, "no endpoint %s %s; the data service serves GET %s, GET %s, POST %s, POST %s, POST %s, POST %s",
			r.Method, r.URL.Path, PathSeries, PathStrategies, PathBacktest, PathSweep, PathWalkForward, PathOptimize))
	})
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.opts.Now()
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	if s.opts.Token != "" && !s.authorized(r) {
		rec.Header().Set("WWW-Authenticate", `Bearer realm="wicket data"`)
		writeError(rec, errorf(KindUnauthorized, "this data service wants its bearer token: the client sends WICKET_DATA_TOKEN (environment or settings/secrets.env) as Authorization: Bearer"))
	} else {
		s.mux.ServeHTTP(rec, whoFromRequest(r))
	}
	s.opts.Log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rec.status, "ms", s.opts.Now().Sub(start).Milliseconds())
}

func (s *server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.opts.Token)) == 1
}

// stream runs a long request: the status and the job header go out with
// the first progress line, so an error before any progress (a bad
// request) still gets its own status.
func (s *server) stream(w http.ResponseWriter, r *http.Request, run func(context.Context, func(Progress)) (any, error)) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	id := s.opts.NewID()
	s.mu.Lock()
	s.jobs[id] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.jobs, id)
		s.mu.Unlock()
	}()
	flusher, _ := w.(http.Flusher)
	started := false
	var mu sync.Mutex
	line := func(l streamLine) {
		mu.Lock()
		defer mu.Unlock()
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set(JobHeader, id)
			w.WriteHeader(http.StatusOK)
		}
		b, _ := json.Marshal(l)
		w.Write(append(b, '\n'))
		if flusher != nil {
			flusher.Flush()
		}
	}
	out, err := run(ctx, func(p Progress) { line(streamLine{Progress: &p}) })
	mu.Lock()
	early := !started
	mu.Unlock()
	if err != nil {
		if early {
			writeError(w, err)
			return
		}
		line(streamLine{Error: wireError(err)})
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		line(streamLine{Error: errorf(KindUnavailable, "encode the result: %v", err)})
		return
	}
	line(streamLine{Result: b})
}

// decodeBody reads a JSON request body strictly: unknown fields are an
// error naming them.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		return errorf(KindInvalid, "read the request: %v (at most %d MiB)", err, maxRequestBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(KindInvalid, "malformed request: %v", err)
	}
	if dec.More() {
		return errorf(KindInvalid, "malformed request: more than one JSON value")
	}
	return nil
}

// statusOf is the one map from error kinds to HTTP statuses.
var statusOf = map[Kind]int{
	KindInvalid:      http.StatusBadRequest,
	KindUnauthorized: http.StatusUnauthorized,
	KindNotFound:     http.StatusNotFound,
	KindCanceled:     http.StatusConflict,
	KindTooMany:      http.StatusRequestEntityTooLarge,
	KindStrategy:     http.StatusUnprocessableEntity,
	KindWorker:       http.StatusInternalServerError,
	KindUnavailable:  http.StatusServiceUnavailable,
}

// wireError is err as the wire carries it.
func wireError(err error) *Error {
	var re *Error
	if !errors.As(classify(err), &re) {
		re = &Error{Kind: KindUnavailable, Msg: err.Error()}
	}
	return &Error{Kind: re.Kind, Msg: re.Msg, Problem: re.Problem}
}

func writeError(w http.ResponseWriter, err error) {
	e := wireError(err)
	status, ok := statusOf[e.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(streamLine{Error: e})
}

func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, errorf(KindUnavailable, "encode the result: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
