// Package tearsheet renders a backtest's tear sheet: one self-contained
// HTML page with the run's settings and metrics and inline SVG charts of
// its equity (beside a passive holding of its series or universe, on a
// linear or, behind a CSS-only toggle, a log scale), drawdown and its
// deepest periods, monthly returns, rolling Sharpe ratio, trade
// distribution and robustness figures. `wicket backtest --report` writes
// it to a file, and the MCP server serves the same page as an MCP App
// resource (ui://wicket/report/{run}).
//
// Render is a pure function of a result: the same result gives the same
// bytes. It must never touch files or the network, and the page it writes
// must never ask for anything outside itself: no script, font, stylesheet
// or image is linked, and a Content-Security-Policy meta forbids them
// (default-src 'none'; style-src 'unsafe-inline'; img-src data:).
//
// The page is bounded whatever the run's length: curves are drawn from at
// most two points per pixel column (the lowest and the highest of the bars
// that fall in it, in time order), the heatmap shows at most MaxYears
// years and the histogram has Bins bins.
package tearsheet
