package agent

import (
	"fmt"
	"testing"
)

// The store keeps a session's newest maxStoredSheets pages, and the pool
// forgets the process's oldest past its byte bound, keeping the newest.
func TestReportStoreBounds(t *testing.T) {
	pool := newSheetPool(1000)
	a, b := &sheetStore{pool: pool}, &sheetStore{pool: pool}
	for i := range maxStoredSheets + 5 {
		a.put(fmt.Sprint(i), []byte("x"))
	}
	if _, ok := a.get("4"); ok {
		t.Error("a session's sixth-newest-past-the-bound page is still kept")
	}
	if _, ok := a.get("5"); !ok {
		t.Error("a session lost a page within its bound")
	}
	if _, ok := b.get("5"); ok {
		t.Error("one session reads another's tear sheet")
	}
	b.put("big", make([]byte, 990))
	if _, ok := a.get("5"); ok {
		t.Error("the pool kept its oldest page past its byte bound")
	}
	if got, ok := b.get("big"); !ok || len(got) != 990 {
		t.Error("the newest page was not kept")
	}
	b.put("huge", make([]byte, 5000))
	if _, ok := b.get("huge"); !ok || pool.used != 5000 || len(pool.order) != 1 {
		t.Errorf("a page over the bound: kept alone? used %d, %d pages", pool.used, len(pool.order))
	}
	b.put("huge", []byte("y"))
	if p, _ := b.get("huge"); string(p) != "y" || pool.used != 1 {
		t.Errorf("a replaced page: %q, used %d", p, pool.used)
	}
}
