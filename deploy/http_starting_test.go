package deploy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHandlerSaysWhyItHasNoRunner: before Attach the surface answers
// 503 with the reason: deployments_off for a node that runs none,
// deployments_starting with a Retry-After while its runner is built,
// deployments_failed once it could not be; with a runner it serves.
func TestHandlerSaysWhyItHasNoRunner(t *testing.T) {
	h := NewHandler()
	ask := func(want, retry string) {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/deployments", nil))
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"code":"`+want+`"`) || rec.Header().Get("Retry-After") != retry {
			t.Fatalf("want %s (Retry-After %q): %d %q %s", want, retry, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
	}
	ask("deployments_off", "")
	h.Starting()
	ask("deployments_starting", "1")
	h.Failed()
	ask("deployments_failed", "")
	g := newRig(t)
	h.Attach(g.r)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/deployments", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("with a runner: %d %s", rec.Code, rec.Body)
	}
}
