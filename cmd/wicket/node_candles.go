package main

import (
	"bytes"
	"log/slog"
	"sync"

	"wicket/deploy"
	"wicket/internal/project"
	"wicket/strategy/history"
	"wicket/strategy/provider/alpaca"
	"wicket/strategy/provider/binance"
)

// nodeCandles is the recorder of the providers' bars that wicket node
// serve runs for its deployments on real venues (deploy.Candles), over
// the project's history store and the providers of wicket.toml, as
// wicket data record would record them. Nil (and a no-op close) when the
// project has no real venue.
func nodeCandles(p project.Project, cfg project.Config, log *slog.Logger) (*deploy.Candles, func(), error) {
	real := false
	for _, v := range cfg.Venues {
		real = real || v.Real()
	}
	if !real {
		return nil, func() {}, nil
	}
	ps, err := newProviderSet(p, cfg, &logLines{log: log.With("from", "provider")})
	if err != nil {
		return nil, nil, err
	}
	store, err := history.Open(p.HistoryPath())
	if err != nil {
		return nil, nil, err
	}
	c := &deploy.Candles{Store: store, Logger: log,
		Tapes: map[string]deploy.Tape{binance.Name: ps.binance(), alpaca.Name: ps.alpaca()}}
	return c, func() { c.Stop(); store.Close() }, nil
}

// logLines writes each line written to it as one log record.
type logLines struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *logLines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.log.Info(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}
