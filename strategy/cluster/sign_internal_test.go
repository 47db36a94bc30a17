package cluster

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"wicket/strategy/clustertest"
	"wicket/strategy/worker"
)

// syncBuf is a log safe for concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// offlineDispatcher is a Dispatcher with no connection, for its message
// handlers alone.
func offlineDispatcher(t *testing.T, key []byte, now func() time.Time) (*Dispatcher, *syncBuf) {
	t.Helper()
	sig, err := newSigner(key, now)
	if err != nil {
		t.Fatal(err)
	}
	sig.sweep = "D"
	log := &syncBuf{}
	return &Dispatcher{o: DispatcherOptions{Now: now, Log: log, WaitWorkers: time.Second}, sig: sig, where: "nats://127.0.0.1:4222", id: "D",
		pending: map[string]*waiter{}, workers: map[string]seen{}, beats: map[string]uint64{}}, log
}

// TestAlteredAnswerIsRefused: an answer signed with the cluster key but
// altered on the way (its body, or a header the signature covers), an
// unsigned one and one signed with another key are each refused and
// counted against the chunk, which keeps waiting; its genuine answer is
// then taken.
func TestAlteredAnswerIsRefused(t *testing.T) {
	key := clustertest.NewKey()
	d, log := offlineDispatcher(t, key, time.Now)
	w := &waiter{answer: make(chan *nats.Msg, 1)}
	d.pending["D.1"] = w
	genuine := func() *nats.Msg {
		m := nats.NewMsg(resultPrefix + "D")
		m.Header.Set(headerChunk, "D.1")
		m.Header.Set(headerWorker, "W1")
		m.Header.Set(headerProtocol, protocol)
		body, err := json.Marshal(worker.SweepChunkResult{Trials: []worker.Trial{{Scores: worker.Scores{Sharpe: 1.5}}}})
		if err != nil {
			t.Fatal(err)
		}
		m.Data = body
		d.sig.sign(m)
		return m
	}
	other, _ := newSigner(clustertest.NewKey(), nil)
	for _, tt := range []struct {
		name  string
		alter func(m *nats.Msg)
	}{
		{"an altered body", func(m *nats.Msg) { m.Data = append(bytes.Clone(m.Data[:len(m.Data)-1]), m.Data[len(m.Data)-1]^1) }},
		{"an error flag added", func(m *nats.Msg) { m.Header.Set(headerError, "1") }},
		{"another chunk named", func(m *nats.Msg) { m.Header.Set(headerChunk, "D.2") }},
		{"another subject", func(m *nats.Msg) { m.Subject = resultPrefix + "E" }},
		{"no signature", func(m *nats.Msg) { m.Header.Del(headerSignature) }},
		{"a malformed signature", func(m *nats.Msg) { m.Header.Set(headerSignature, "not hex") }},
		{"another key's signature", func(m *nats.Msg) { other.sign(m) }},
	} {
		m := genuine()
		tt.alter(m)
		d.onReply(m)
		select {
		case <-w.answer:
			t.Fatalf("%s: taken", tt.name)
		default:
		}
	}
	if d.Refused() != 7 || w.refused != 6 { // "another chunk named" counts against no waiting chunk
		t.Errorf("refused %d, against the chunk %d; want 7 and 6", d.Refused(), w.refused)
	}
	d.onReply(genuine())
	select {
	case m := <-w.answer:
		res, err := decodeAnswer(m)
		if err != nil || len(res.Trials) != 1 || res.Trials[0].Scores.Sharpe != 1.5 {
			t.Fatalf("the genuine answer: %+v %v", res, err)
		}
	default:
		t.Fatal("the genuine answer was not taken")
	}
	l := log.String()
	if strings.Count(l, "refused an answer to chunk") != 7 || !strings.Contains(l, `chunk "D.1"`) || !strings.Contains(l, "7 refused so far") {
		t.Errorf("the log:\n%s", l)
	}
}

// TestForgedHeartbeatIsIgnored: a heartbeat without the cluster key's
// signature, or with another key's, adds no worker; a genuine one does;
// the same genuine heartbeat sent again later does not keep its worker
// present; and a sweep that finds no worker says heartbeats were ignored.
func TestForgedHeartbeatIsIgnored(t *testing.T) {
	key := clustertest.NewKey()
	now := time.Unix(1_700_000_000, 0)
	d, log := offlineDispatcher(t, key, func() time.Time { return now })
	beat := func(s *signer, seq uint64) *nats.Msg {
		b, _ := json.Marshal(presence{ID: "W1", Host: "h", Slots: 8, Seq: seq})
		if s == nil {
			m := nats.NewMsg(presenceSubj)
			m.Data = b
			return m
		}
		return s.signed(presenceSubj, b)
	}
	other, _ := newSigner(clustertest.NewKey(), nil)
	d.onPresence(beat(nil, 1))
	d.onPresence(beat(other, 1))
	if d.present() || d.Size() != 1 {
		t.Fatalf("forged heartbeats count: present %v, size %d", d.present(), d.Size())
	}
	genuine := beat(d.sig, 2)
	d.onPresence(genuine)
	if !d.present() || d.Size() != 8 {
		t.Fatalf("a genuine heartbeat: present %v, size %d", d.present(), d.Size())
	}
	now = now.Add(liveFor + time.Second)
	d.onPresence(genuine) // recorded and sent again
	if d.present() {
		t.Fatal("a heartbeat sent again keeps its worker present")
	}
	d.onPresence(beat(d.sig, 3))
	if !d.present() {
		t.Fatal("the worker's next heartbeat is not taken")
	}
	if l := log.String(); strings.Count(l, "ignored a heartbeat") != 1 {
		t.Errorf("want one line for the ignored heartbeats:\n%s", l)
	}
	if err := d.noWorkersWith("connected"); !strings.Contains(err.Error(), "2 heartbeats were ignored") || !strings.Contains(err.Error(), "WICKET_CLUSTER_KEY") {
		t.Errorf("no workers: %v", err)
	}
}

// BenchmarkSign is the cost the signatures add to one message: signing
// it where it is sent and verifying it where it arrives, at the sizes of
// a sweep chunk (a strategy and its combinations, a few KiB), a chunk's
// answer (tens of KiB) and the largest message the server takes by
// default (1 MiB).
func BenchmarkSign(b *testing.B) {
	s, err := newSigner(clustertest.NewKey(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			m := nats.NewMsg(resultPrefix + "D")
			m.Header.Set(headerChunk, "D.1")
			m.Header.Set(headerWorker, "W1")
			m.Header.Set(headerProtocol, protocol)
			m.Data = bytes.Repeat([]byte("x"), size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				s.sign(m)
				if !s.verify(m.Subject, m.Header, m.Data) {
					b.Fatal("does not verify")
				}
			}
		})
	}
}
