package research

import (
	"slices"
	"testing"
	"time"
)

// TestChunkSizes: a sweep whose chunks guided scheduling would cut below
// minWorkerShare of work is cut into few equal chunks, whole rounds of
// the workers (a small sweep on one worker is one chunk); a large one
// keeps guided scheduling's shrinking chunks, more of them than workers.
func TestChunkSizes(t *testing.T) {
	guided := func(count, workers int) []int { return chunkSizes(count, workers, 0) }
	for _, c := range []struct {
		name           string
		count, workers int
		bars           int
		want           []int
	}{
		{"the demo's sweep on one worker", 100, 1, 17_544, []int{100}},
		{"250 combinations over hourly bars on two", 250, 2, 17_544, []int{125, 125}},
		{"400 combinations over hourly bars on one", 400, 1, 17_544, []int{134, 133, 133}},
		{"1,000 over hourly bars on two", 1000, 2, 17_544, []int{125, 125, 125, 125, 125, 125, 125, 125}},
		{"one combination", 1, 2, 17_544, []int{1}},
		{"100 combinations over a million bars on two", 100, 2, 1_000_000, guided(100, 2)},
		{"bars not known", 100, 1, 0, guided(100, 1)},
	} {
		got := chunkSizes(c.count, c.workers, worthChunk(c.bars))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: chunks %v, want %v", c.name, got, c.want)
		}
	}
	if g := guided(100, 2); len(g) < 4 || g[0] <= g[len(g)-1] {
		t.Errorf("guided scheduling of a million-bar sweep on two workers: %v, want shrinking chunks, at least two a worker", g)
	}
	if got := worthChunk(17_544); got != 114 {
		t.Errorf("worthChunk(17,544) = %d, want 114 (40 ms at 20 ns a bar)", got)
	}
	// Whatever the sizes, every combination is in exactly one chunk.
	for _, count := range []int{0, 1, 7, 100, 250, 999, 5000} {
		for _, workers := range []int{1, 2, 3, 8} {
			for _, worth := range []int{0, 1, 50, 114, 2000, 10_000} {
				sum := 0
				for _, s := range chunkSizes(count, workers, worth) {
					if s <= 0 {
						t.Fatalf("chunkSizes(%d, %d, %d) has a chunk of %d", count, workers, worth, s)
					}
					sum += s
				}
				if sum != count {
					t.Fatalf("chunkSizes(%d, %d, %d) covers %d combinations", count, workers, worth, sum)
				}
			}
		}
	}
}

// TestWorthChunkAtMeasuredCost: combinations measured dearer than
// barTrialCost (a cluster's coster) make a chunk of fewer of them; ones
// measured cheaper, or none measured, are worthChunk's.
func TestWorthChunkAtMeasuredCost(t *testing.T) {
	for _, c := range []struct {
		cost time.Duration
		want int
	}{{0, 114}, {10 * time.Nanosecond, 114}, {40 * time.Nanosecond, 57}, {200 * time.Nanosecond, 12}, {time.Millisecond, 1}} {
		if got := worthChunkAt(17_544, c.cost); got != c.want {
			t.Errorf("worthChunkAt(17,544, %v) = %d, want %d (40 ms of work)", c.cost, got, c.want)
		}
	}
	if got := chunkSizes(100, 1, worthChunkAt(17_544, 10*time.Nanosecond)); !slices.Equal(got, []int{100}) {
		t.Errorf("the demo's sweep on a one-worker cluster: chunks %v, want one", got)
	}
	if got := chunkSizes(100, 2, worthChunkAt(17_544, 200*time.Nanosecond)); len(got) < 4 {
		t.Errorf("100 dear combinations on two cluster workers: chunks %v, want at least two a worker", got)
	}
}
