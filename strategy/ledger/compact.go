package ledger

import (
	"bytes"
	"encoding/json"

	"wicket/internal/jsoncompact"
)

// compactJSON is src as json.Compact writes it, and json.Compact's error
// when src is not JSON. Most of what a row carries was written compact by
// encoding/json already (a sweep's hundred rows of metrics and audit), so
// src is first read by jsoncompact.Is, several times cheaper than
// json.Compact's scanner: when it finds one JSON value with no space
// between its tokens, src is returned as it is; anything else, space or
// a doubt, goes to json.Compact.
func compactJSON(src []byte) ([]byte, error) {
	if jsoncompact.Is(src) {
		return src, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, src); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
