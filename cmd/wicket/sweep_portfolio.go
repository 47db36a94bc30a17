package main

// portfolioVerbs are the research commands that run without --series: a
// strategy that declares its universe (a portfolio strategy) names its
// own series, and research runs each combination as one portfolio
// backtest over them; one that does not is refused with what to give.
var portfolioVerbs = map[string]bool{"sweep": true, "walk-forward": true, "cpcv": true}
