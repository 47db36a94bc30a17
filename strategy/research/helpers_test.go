package research

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"wicket/internal/project"
	"wicket/strategy/history"
	"wicket/strategy/ta"
	"wicket/strategy/templates"
	"wicket/strategy/worker"
	"wicket/strategy/worker/handlers"
)

// TestMain lets a Pool run this test binary as its workers.
func TestMain(m *testing.M) {
	worker.ServeIfWorker(handlers.New(ta.NewMemo(worker.MemoBytes)))
	if dir := os.Getenv(rssEnv); dir != "" {
		os.Exit(rssChild(dir))
	}
	code := m.Run()
	printRatios()
	if demoDir != "" {
		os.RemoveAll(demoDir)
	}
	os.Exit(code)
}

var (
	demoOnce sync.Once
	demoDir  string
	demoErr  error
)

// demoProject returns a project, shared by the tests of this binary, whose
// history store holds the demo series. Tests must not write to it.
func demoProject(t testing.TB) project.Project {
	t.Helper()
	demoOnce.Do(func() {
		demoDir, demoErr = os.MkdirTemp("", "wicket-research-")
		if demoErr != nil {
			return
		}
		p := project.Project{Root: demoDir}
		s, err := history.Open(p.HistoryPath())
		if err != nil {
			demoErr = err
			return
		}
		defer s.Close()
		if _, demoErr = history.SeedDemo(context.Background(), s); demoErr != nil {
			return
		}
		demoErr = writeStrategies(p, demoStrategies())
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return project.Project{Root: demoDir}
}

// newPool starts a pool of size workers of this test binary.
func newPool(t testing.TB, size int) *worker.Pool {
	t.Helper()
	p, err := worker.NewPool(worker.Config{Size: size, MemoryMiB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// newLocal is a Local over the demo project with a pool of size workers.
func newLocal(t testing.TB, size int) *Local {
	t.Helper()
	return NewLocal(Config{ProofSeed: fixedSeed, Project: demoProject(t), Research: project.Defaults().Research, Pool: newPool(t, size)})
}

func templateRef(t testing.TB, name string) StrategyRef {
	t.Helper()
	src, err := templates.Source(name)
	if err != nil {
		t.Fatal(err)
	}
	return StrategyRef{Source: src, Label: name + ".star"}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// demoStrategies are the files of the demo project's strategies/: a
// template under its own name, one that does not parse, and two files a
// listing must skip.
func demoStrategies() map[string]string {
	src, _ := templates.Source("sma_cross")
	return map[string]string{
		"mine.star":     src,
		"broken.star":   "\"\"\"Half written.\"\"\"\ndef signals(bars:\n",
		"notes.txt":     "not a strategy",
		"bad name.star": "\"\"\"Not a bare name.\"\"\"\n",
	}
}

// writeStrategies writes files into p's strategies/ folder.
func writeStrategies(p project.Project, files map[string]string) error {
	if err := os.MkdirAll(p.StrategiesDir(), 0o755); err != nil {
		return err
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(p.StrategiesDir(), name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fixedSeed fixes the lookahead proofs' seed, so two runs of one request
// report the same verdict (each proof draws its own seed in production).
func fixedSeed() uint64 { return 1 }
