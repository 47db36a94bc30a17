package guardrail

// Listed is the symbol venue lists that sym names in either spelling
// (BTCUSDT or BTC-USD for a binance venue listing BTC-USD: BTC-USD), so a
// command may name a symbol as wicket writes it or as the venue does. A
// symbol the venue does not list, or an unknown venue, leaves sym as it is
// for the checks to refuse.
func (g *Guardrail) Listed(venue, sym string) string {
	if g == nil || sym == "" {
		return sym
	}
	v, ok := g.venues[venue]
	if !ok {
		return sym
	}
	if listed, ok := v.Resolve(sym); ok {
		return listed
	}
	return sym
}
