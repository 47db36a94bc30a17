package cluster

import "github.com/nats-io/nats.go"

// Sign signs m with key, as a sweep or a worker holding key does: for
// tests that play a part of the cluster.
func Sign(key []byte, m *nats.Msg) {
	s, err := newSigner(key, nil)
	if err != nil {
		panic(err)
	}
	s.sign(m)
}

// Protocol is the cluster's wire version, for tests that play a part of
// the cluster.
const Protocol = protocol

// Present reports whether d counts a worker present now.
func Present(d *Dispatcher) bool { return d.present() }

// LiveFor is how long a sweep counts a worker present after its heartbeat.
const LiveFor = liveFor

// Shipped is how many bars d put in the cluster's store.
func Shipped(d *Dispatcher) uint64 { return d.shipped.Load() }

// BarsPushSubject is where a sweep pushes bars to the workers.
const BarsPushSubject = barsPushSubj

// MinCostedTrial is the least a chunk's trials take each for the chunk to
// measure a bar's cost.
const MinCostedTrial = minCostedTrial
