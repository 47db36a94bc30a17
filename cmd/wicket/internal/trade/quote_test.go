package trade

import "strings"

// quoteTradeWord writes a word so that splitTradeLine reads it back unchanged.
func quoteTradeWord(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\r\n'\"\\") {
		return w
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(w) + `"`
}
