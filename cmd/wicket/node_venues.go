package main

import (
	"fmt"
	"time"

	"wicket/internal/project"
	"wicket/node/alpaca"
	"wicket/node/binance"
	"wicket/node/binancefutures"
	"wicket/node/server"
)

// venueExchanges builds the adapter of every real venue in wicket.toml,
// with its keys from the environment or settings/secrets.env. Keys go to
// the adapter and nowhere else.
func venueExchanges(p *project.Project, cfg project.Config, timeout time.Duration) (map[string]server.Exchange, error) {
	out := map[string]server.Exchange{}
	var secrets *project.Secrets
	for _, v := range cfg.Venues {
		if !v.Real() {
			continue
		}
		if secrets == nil {
			s, err := loadSecrets(p)
			if err != nil {
				return nil, err
			}
			secrets = s
		}
		names := project.VenueKeys[v.Kind]
		id, _, _ := secrets.Lookup(names[0])
		secret, _, _ := secrets.Lookup(names[1])
		if id == "" || secret == "" {
			return nil, fmt.Errorf("venue %s (%s): keys missing: set %s and %s in the environment or in settings/secrets.env (`wicket secrets list` shows what is found)",
				v.Name, v.Kind, names[0], names[1])
		}
		ex, err := newExchange(v, id, secret, timeout)
		if err != nil {
			return nil, err
		}
		out[v.Name] = ex
	}
	return out, nil
}

func newExchange(v project.Venue, id, secret string, timeout time.Duration) (server.Exchange, error) {
	switch v.Kind {
	case project.KindBinance:
		return binance.New(binance.Config{Venue: v, APIKey: id, APISecret: secret, Timeout: timeout})
	case project.KindBinanceFutures:
		return binancefutures.New(binancefutures.Config{Venue: v, APIKey: id, APISecret: secret, Timeout: timeout})
	case project.KindAlpaca:
		return alpaca.New(alpaca.Config{Venue: v, KeyID: id, Secret: secret, Timeout: timeout})
	}
	return nil, fmt.Errorf("venue %s: no adapter for kind %s", v.Name, v.Kind)
}
