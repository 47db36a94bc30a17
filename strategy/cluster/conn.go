package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"wicket/strategy/worker"
)

// Names on the NATS server.
const (
	// StreamName is the work-queue stream of chunks, chunkSubjects its
	// subjects: one per chunk, wicket.chunks.<dispatcher>.<seq>.
	StreamName    = "WICKET_CHUNKS"
	chunkSubjects = "wicket.chunks.>"
	chunkPrefix   = "wicket.chunks."
	// ConsumerName is the durable pull consumer every worker shares.
	ConsumerName = "wicket-workers"
	// BarsBucket is the object store of bars, keyed by digest.
	BarsBucket = "wicket-bars"

	resultPrefix  = "wicket.results." // + dispatcher id: core NATS replies
	cancelPrefix  = "wicket.cancel."  // + chunk id: stop this chunk
	tailPrefix    = "wicket.tail."    // + worker id: core NATS tail copies for that worker (Dispatcher.onPresence)
	presenceSubj  = "wicket.workers"  // workers' heartbeats
	pingSubj      = "wicket.workers.ping"
	barsSubj      = "wicket.bars"      // a digest: fetch these bars now, a sweep over them is coming
	barsPushSubj  = "wicket.bars.push" // a barsNote and the bars themselves (Dispatcher.push)
	headerChunk   = "Wicket-Chunk"
	headerReply   = "Wicket-Reply"
	barsMaxAge    = 7 * 24 * time.Hour // shipped bars expire a week after upload
	chunksMaxAge  = 24 * time.Hour     // a chunk nobody took in a day is dropped
	dedupeWindow  = 10 * time.Minute
	heartbeatTick = time.Second
)

// Options say how to reach the cluster.
type Options struct {
	// URL is nats://host:port, or tls://host:port for TLS.
	URL string
	// At most one credential: a token, a user and password, a creds file
	// path (JWT and seed) or an nkey seed file path.
	Token, User, Password, CredsFile, NKeyFile string
	// Key is the cluster key (at least MinKeyLen bytes), the same on every
	// machine of the cluster: every message is signed with it.
	Key []byte
	// Insecure allows a cluster that is not on this machine to be reached
	// without TLS or without a credential (--insecure-cluster). Without it
	// such a URL is refused before anything is dialled (CheckTransport).
	Insecure bool
	// CAFile, with a tls:// URL, is a PEM file of the certificates of the
	// CAs that may sign the server's certificate, instead of the system's
	// roots (for a server whose certificate a private CA signed).
	CAFile string
	// Name names the connection on the server (for its monitoring).
	Name string
	// ConnectTimeout bounds reaching the server; 0 means 5s.
	ConnectTimeout time.Duration
}

// DefaultConnectTimeout bounds reaching the server.
const DefaultConnectTimeout = 5 * time.Second

// redacted is the URL without any user info, for messages.
func redacted(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the cluster URL"
	}
	u.User = nil
	return u.String()
}

// connect reaches the server and makes sure the stream and the bars
// bucket exist.
func connect(ctx context.Context, o Options) (*nats.Conn, jetstream.JetStream, jetstream.Stream, jetstream.ObjectStore, error) {
	timeout := o.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	opts := []nats.Option{nats.Name(o.Name), nats.Timeout(timeout), nats.MaxReconnects(-1), nats.ReconnectWait(500 * time.Millisecond)}
	if err := CheckTransport(o); err != nil {
		return nil, nil, nil, nil, err
	}
	auth, err := credentialOptions(o)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	where := redacted(o.URL)
	nc, err := nats.Connect(o.URL, append(opts, auth...)...)
	if err != nil {
		return nil, nil, nil, nil, dialError(o, timeout, err)
	}
	fail := func(what string, err error) (*nats.Conn, jetstream.JetStream, jetstream.Stream, jetstream.ObjectStore, error) {
		nc.Close()
		return nil, nil, nil, nil, fmt.Errorf("research cluster at %s: %s: %w (is JetStream enabled on the server, and in operator mode for this account?)", where, what, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fail("JetStream", err)
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Asking for the account's JetStream first says plainly when the
	// account has none, and waits out a server that is still setting it up
	// (in operator mode it does so on the account's first connection).
	if err := retryCreate(sctx, func() error { _, err := js.AccountInfo(sctx); return err }); err != nil {
		return fail("JetStream for this account", err)
	}
	var st jetstream.Stream
	err = retryCreate(sctx, func() (err error) {
		st, err = js.CreateOrUpdateStream(sctx, jetstream.StreamConfig{
			Name: StreamName, Subjects: []string{chunkSubjects}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, MaxAge: chunksMaxAge, Duplicates: dedupeWindow,
			Description: "wicket research sweep chunks (a work queue)",
		})
		return err
	})
	if err != nil {
		return fail("create the chunk stream", err)
	}
	var obj jetstream.ObjectStore
	err = retryCreate(sctx, func() (err error) {
		obj, err = js.CreateOrUpdateObjectStore(sctx, jetstream.ObjectStoreConfig{
			Bucket: BarsBucket, TTL: barsMaxAge, Description: "wicket bars shipped to research workers, keyed by digest",
		})
		return err
	})
	if err != nil {
		return fail("create the bars store", err)
	}
	return nc, js, st, obj, nil
}

// retryCreate runs create until it succeeds, it fails for a reason
// other than the server's (a JetStream API error of code 500 or more),
// or ctx ends: two processes that create the same stream at the same
// moment (a worker and a sweep starting together) can make the server
// fail one of them, and the next attempt finds the stream.
func retryCreate(ctx context.Context, create func() error) error {
	wait := 20 * time.Millisecond
	for {
		err := create()
		var api *jetstream.APIError
		if err == nil || !errors.As(err, &api) || api.Code < 500 || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// presence is a worker's heartbeat. Seq grows with each one a worker
// sends, so a heartbeat recorded and sent again is ignored.
type presence struct {
	ID    string `json:"id"`
	Host  string `json:"host"`
	Slots int    `json:"slots"`
	Busy  int    `json:"busy"` // chunks running
	Held  int    `json:"held"` // chunks received, waiting for a slot
	Seq   uint64 `json:"seq"`
}

// barsNote announces bars a sweep is about to run over (barsSubj): a
// worker fetches them into its cache. Unsure, the sweep did not know yet
// whether the cluster's store holds them: a worker that finds nothing
// says nothing (another note follows once they are shipped).
type barsNote struct {
	Digest string `json:"digest"`
	Series string `json:"series"`
	Unsure bool   `json:"unsure,omitempty"`
}

// A chunk's answer on the dispatcher's reply subject is a core NATS
// message whose headers name the chunk and the worker and whose body is
// the strategy worker's answer (worker.SweepAnswer), or with headerError
// set a worker.WireError in JSON.
const (
	headerWorker = "Wicket-Worker"
	headerError  = "Wicket-Error" // "1": the body is a worker.WireError
	// headerHeld "1" marks a worker's notice, on the reply subject, that
	// it holds the chunk (running it, or next to run): the chunk is off
	// the queue, and a copy of it may go to an idle worker (the tail).
	headerHeld = "Wicket-Held"
)

// Chunks and answers carry the cluster's wire version, the form this
// build writes them in (chunk messages, answers, shipped bars); it
// changes whenever any of them does. A worker answers a chunk of another
// version with an error, and a dispatcher refuses an answer of another
// version, so a cluster of mixed versions fails with an error that says
// so, never by misreading a message.
const (
	headerProtocol = "Wicket-Protocol"
	// 2: a trial's PBO blocks are one base64 string.
	// 3: every message is signed with the cluster key (sign.go), and a
	// heartbeat carries a sequence number.
	// 4: a worker holds two chunks per slot and says so (headerHeld, the
	// heartbeat's held), and runs tail copies sent to it alone; a bars
	// announcement is a barsNote.
	// 5: a chunk that charges funding names the store's funding, shipped
	// by its digest like bars (worker.SweepChunk.FundingDigest).
	// 6: every message is bound to its sweep, numbered and stamped with
	// its expiry under the signature (sign.go).
	// 7: bars small enough are pushed to the workers (barsPushSubj)
	// while they are put in the store, and a chunk may be queued before
	// the upload ends: a worker waits for bars the store does not hold
	// yet. A result is in gob.
	// 8: a result is the strategy worker's answer in the pool's binary
	// form (worker.SweepAnswer), passed on as it is.
	protocol = "8"
)

// protocolError is the error for a message of another wire version.
func protocolError(what, got string) error {
	if got == "" {
		got = "none, an older wicket"
	}
	return &worker.Error{Kind: worker.KindRequest, Msg: fmt.Sprintf(
		"%s in cluster wire version %s, and this wicket speaks version %s: run the same wicket version on every machine of the research cluster", what, got, protocol)}
}
