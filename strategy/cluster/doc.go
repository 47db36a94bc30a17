// Package cluster runs research sweep chunks on `wicket worker` processes
// on any number of machines, through a NATS JetStream server.
//
// The Dispatcher (research's chunk dispatcher when [research] cluster is
// set) publishes each chunk (a worker.SweepChunk) on a work-queue
// stream, ships the chunk's bars once into an object store keyed by
// their digest, and waits for the chunk's result on its reply subject,
// keyed by chunk id: the first result of a chunk wins and any later copy
// is dropped. A sweep keeps two chunks per worker slot under way
// (InFlight), and a worker holds two per slot, the one it runs and the
// next, fetched while the first runs, so a slot never waits on a round
// trip between chunks; each tells the sweep it holds a chunk. At a
// sweep's tail, when a worker has a free slot and every chunk the sweep
// waits for is held, the sweep sends that worker alone a copy of the
// chunk held longest: the first answer wins, the other run is stopped.
// Before its first chunk, while the params request compiles the
// strategy, the bars are read and hashed once (not again while the
// history store is unchanged), shipped unless the cluster's store holds
// them, and the workers told to fetch them (Warm); a strategy worker
// maps them as they are in the cache, which holds only bars that hashed
// to their digest. The sweep plans by what Warm read. The
// dispatcher measures what a combination of each strategy costs a bar
// (TrialCost), by which a sweep sizes its chunks. The result comes
// from the strategy worker in the pool's binary form and crosses the
// cluster as it is (worker.SweepAnswer), decoded once, by the
// dispatcher. A Worker pulls chunks from the stream, fetches bars it has not seen into a
// local cache (once per machine), runs each chunk in its own rlimited
// worker.Pool, answers, and only then acks. A worker that
// dies stops reporting progress on the chunks it holds, and JetStream
// hands them to another worker after the ack wait (or an idle worker
// runs a tail copy first): no chunk is lost, none is counted twice. Cancelling a sweep purges its queued chunks and tells
// every worker to stop the ones it runs.
//
// Credentials are a token, a user and password, a .creds file or an
// nkey seed file, each file checked before anything is sent; a tls://
// server is verified against the system's roots or a CA file
// (Options.CAFile). A server that is not on this machine is refused
// without TLS or without a credential unless Options.Insecure
// (CheckTransport). Every message is signed with the cluster key
// (sign.go): a chunk, an answer, a heartbeat, a ping, a cancel or an
// announcement whose signature does not verify is refused, and a
// refused answer is counted (Dispatcher.Refused, and the chunk's
// worker.SweepChunkResult.Refused) while its chunk waits on for the
// genuine one. The signature also covers each message's sweep, sequence
// number and expiry, so a signed message published again is refused once
// it expires, a worker runs a chunk id once, and a sweep takes a worker's
// heartbeats only in increasing sequence. A chunk whose sweep fails
// leaves the stream with it.
//
// It must never run strategy code in the process that talks to NATS
// (that is the pool's job), never run a chunk or take an answer that
// the cluster key did not sign (nor sign an answer to such a chunk),
// never put credentials or the key in a URL, a log or a message, and
// never wait without bound: an unreachable server, or a cluster with no
// workers, is an error within a stated time.
package cluster
