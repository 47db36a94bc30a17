package cluster

import (
	"context"
	"encoding/json"
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
	presenceSubj  = "wicket.workers"  // workers' heartbeats
	pingSubj      = "wicket.workers.ping"
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
	// At most one credential: a token, a creds file path (JWT and seed)
	// or an nkey seed file path.
	Token, CredsFile, NKeyFile string
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
	n := 0
	if o.Token != "" {
		opts = append(opts, nats.Token(o.Token))
		n++
	}
	if o.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(o.CredsFile))
		n++
	}
	if o.NKeyFile != "" {
		opt, err := nats.NkeyOptionFromSeed(o.NKeyFile)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("read the NATS nkey seed file: %w", err)
		}
		opts = append(opts, opt)
		n++
	}
	if n > 1 {
		return nil, nil, nil, nil, errors.New("give the research cluster one credential: a token, a creds file or an nkey seed file, not several")
	}
	where := redacted(o.URL)
	nc, err := nats.Connect(o.URL, opts...)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("cannot reach the research cluster at %s within %s: %w; check the address, that nats-server runs there with JetStream on (-js), and its credentials in secrets.env", where, timeout, err)
	}
	fail := func(what string, err error) (*nats.Conn, jetstream.JetStream, jetstream.Stream, jetstream.ObjectStore, error) {
		nc.Close()
		return nil, nil, nil, nil, fmt.Errorf("research cluster at %s: %s: %w (is JetStream enabled on the server?)", where, what, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fail("JetStream", err)
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st, err := js.CreateOrUpdateStream(sctx, jetstream.StreamConfig{
		Name: StreamName, Subjects: []string{chunkSubjects}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, MaxAge: chunksMaxAge, Duplicates: dedupeWindow,
		Description: "wicket research sweep chunks (a work queue)",
	})
	if err != nil {
		return fail("create the chunk stream", err)
	}
	obj, err := js.CreateOrUpdateObjectStore(sctx, jetstream.ObjectStoreConfig{
		Bucket: BarsBucket, TTL: barsMaxAge, Description: "wicket bars shipped to research workers, keyed by digest",
	})
	if err != nil {
		return fail("create the bars store", err)
	}
	return nc, js, st, obj, nil
}

// presence is a worker's heartbeat.
type presence struct {
	ID    string `json:"id"`
	Host  string `json:"host"`
	Slots int    `json:"slots"`
	Busy  int    `json:"busy"`
}

// reply is a chunk's result on the dispatcher's reply subject.
type reply struct {
	Chunk  string            `json:"chunk"`
	Worker string            `json:"worker"`
	Result json.RawMessage   `json:"result,omitempty"`
	Error  *worker.WireError `json:"error,omitempty"`
}
