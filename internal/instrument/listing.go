package instrument

// Listing is a venue's symbols list read through its kind's Map, for a
// venue adapter to map at its boundary: a symbol the node names, in either
// spelling, goes to the venue in the kind's own (Venue: BTC-USD →
// BTCUSDT), and a symbol the venue names comes back as the list writes it
// (Listed: BTCUSDT → BTC-USD for a list naming BTC-USD, BTCUSDT for one
// naming BTCUSDT). The zero Listing passes every symbol as it is.
type Listing struct {
	m      Map
	listed map[string]string // the kind's own spelling → the list's
}

// Listing is symbols, a venue's list, read through m.
func (m Map) Listing(symbols []string) Listing {
	l := Listing{m: m, listed: make(map[string]string, len(symbols))}
	for _, s := range symbols {
		l.listed[l.Venue(s)] = s
	}
	return l
}

// Map is the listing's symbol map.
func (l Listing) Map() Map { return l.m }

// Venue is s, written either way, in the kind's own spelling; one the map
// cannot spell goes as it is, for the venue to refuse.
func (l Listing) Venue(s string) string {
	if v, err := l.m.Venue(s); err == nil {
		return v
	}
	return s
}

// Venues is Venue of each.
func (l Listing) Venues(symbols []string) []string {
	out := make([]string, len(symbols))
	for i, s := range symbols {
		out[i] = l.Venue(s)
	}
	return out
}

// Listed is own, a symbol in the kind's spelling as the venue wrote it, as
// the list writes it; one the list does not name comes back as it is.
func (l Listing) Listed(own string) string {
	if s, ok := l.listed[own]; ok {
		return s
	}
	return own
}

// Named is s as a venue's refusal names it: the kind's own spelling, with
// the list's after it when that differs ("BTCUSDT (BTC-USD in
// wicket.toml)"), so the message says what the venue was asked for and
// what to change.
func (l Listing) Named(s string) string {
	if v := l.Venue(s); v != s {
		return v + " (" + s + " in wicket.toml)"
	}
	return s
}
