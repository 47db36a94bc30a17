package agent_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"wicket/node/nodetest"
)

var update = flag.Bool("update", false, "rewrite the testdata/transcripts golden output")

// Transcript tests replay JSON-RPC exchanges from testdata/transcripts/*.txtar
// against the real binary, over stdio and over Streamable HTTP, and compare
// the responses with the file's "out" section (ids kept, session ids,
// tokens, times and versions normalised). `go test -run Transcript -update`
// rewrites the out sections.
//
// Sections: "flags" (one mcp flag per line; "@node" starts a nodetest
// node and passes --node; "@demo" seeds demo bars and a strategy "mine"),
// "in" (one message per line; a line starting "#async " is sent without
// waiting for its response, "#sleep 200ms" pauses), "out".
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]string{}
			for _, f := range ar.Files {
				sec[f.Name] = string(f.Data)
			}
			var outs []string
			for _, tr := range []string{"stdio", "http"} {
				env, proj, flags := transcriptSetup(t, sec["flags"])
				var got []string
				if tr == "stdio" {
					got = replayStdio(t, env, proj, flags, sec["in"])
				} else {
					got = replayHTTP(t, env, proj, flags, sec["in"])
				}
				outs = append(outs, strings.Join(got, "\n")+"\n")
			}
			if outs[0] != outs[1] {
				t.Errorf("stdio and HTTP answered differently:\n--- stdio\n%s--- http\n%s", outs[0], outs[1])
			}
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "out" {
						ar.Files[i].Data = []byte(outs[0])
					}
				}
				if _, ok := sec["out"]; !ok {
					ar.Files = append(ar.Files, txtar.File{Name: "out", Data: []byte(outs[0])})
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if outs[0] != sec["out"] {
				t.Errorf("transcript differs (rerun with -update to accept):\n--- got\n%s--- want\n%s", outs[0], sec["out"])
			}
		})
	}
}

func transcriptSetup(t *testing.T, flags string) (env []string, proj string, args []string) {
	proj = newProject(t)
	for _, f := range strings.Fields(flags) {
		switch f {
		case "@node":
			n := nodetest.NewServer(t)
			env = nodeEnv(n)
			args = append(args, "--node", n.Addr)
		case "@demo":
			runWicket(t, nil, "--project", proj, "data", "seed-demo")
			runWicket(t, nil, "--project", proj, "strategy", "new", "mine", "--from", "sma_cross")
		default:
			args = append(args, f)
		}
	}
	return env, proj, args
}

// transcriptLines splits the "in" section into directives and messages.
func transcriptLines(in string) []string {
	var out []string
	for _, l := range strings.Split(in, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "//") {
			out = append(out, l)
		}
	}
	return out
}

// requestID is a message's id when it is a request ("" otherwise; a batch
// is keyed "batch").
func requestID(line string) string {
	if strings.HasPrefix(strings.TrimSpace(line), "[") {
		return "batch"
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &m) != nil {
		return "garbage"
	}
	if m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return ""
	}
	return string(m.ID)
}

func replayStdio(t *testing.T, env []string, proj string, flags []string, in string) []string {
	cmd := exec.Command(wicketBin, append([]string{"--project", proj, "mcp"}, flags...)...)
	cmd.Env = append(append(os.Environ(), cleanEnv...), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var got, async []string
	next := func(wantID string) {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed while waiting for id %s", wantID)
				}
				if isNotification(l) {
					continue
				}
				if id := responseKey(l); id == wantID || ((wantID == "batch" || wantID == "garbage") && (strings.HasPrefix(l, "[") || id == "null")) {
					got = append(got, normalize(l))
					return
				}
				async = append(async, normalize(l)) // an async call's answer
			case <-time.After(60 * time.Second):
				t.Fatalf("no response for id %s", wantID)
			}
		}
	}
	for _, l := range transcriptLines(in) {
		if d, ok := strings.CutPrefix(l, "#sleep "); ok {
			dur, _ := time.ParseDuration(d)
			time.Sleep(dur)
			continue
		}
		msg, isAsync := strings.CutPrefix(l, "#async ")
		fmt.Fprintln(stdin, msg)
		if id := requestID(msg); id != "" && !isAsync && !strings.HasPrefix(id, "\"nowait") {
			next(id)
		}
	}
	stdin.Close()
	for l := range lines {
		if !isNotification(l) {
			async = append(async, normalize(l))
		}
	}
	_ = cmd.Wait()
	sort.Strings(async)
	return append(got, async...)
}

func replayHTTP(t *testing.T, env []string, proj string, flags []string, in string) []string {
	h := startHTTP(t, env, proj, append([]string{"--no-auth"}, flags...)...)
	var (
		sid   string
		mu    sync.Mutex
		async []string
		wg    sync.WaitGroup
		got   []string
	)
	post := func(msg string) []string {
		req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		modernHeaders(req.Header, msg) // e2e_2026_http_test.go
		mu.Lock()
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		mu.Unlock()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("POST: %v", err)
			return nil
		}
		defer res.Body.Close()
		if id := res.Header.Get("Mcp-Session-Id"); id != "" {
			mu.Lock()
			sid = id
			mu.Unlock()
		}
		body, _ := io.ReadAll(res.Body)
		var out []string
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			for _, l := range strings.Split(string(body), "\n") {
				if d, ok := strings.CutPrefix(l, "data: "); ok && !isNotification(d) {
					out = append(out, normalize(d))
				}
			}
		} else if b := bytes.TrimSpace(body); len(b) > 0 {
			out = append(out, normalize(string(b)))
		}
		return out
	}
	for _, l := range transcriptLines(in) {
		if d, ok := strings.CutPrefix(l, "#sleep "); ok {
			dur, _ := time.ParseDuration(d)
			time.Sleep(dur)
			continue
		}
		msg, isAsync := strings.CutPrefix(l, "#async ")
		if isAsync || strings.HasPrefix(requestID(msg), "\"nowait") {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := post(msg)
				mu.Lock()
				async = append(async, r...)
				mu.Unlock()
			}()
			continue
		}
		got = append(got, post(msg)...)
	}
	wg.Wait()
	sort.Strings(async)
	return append(got, async...)
}

func isNotification(l string) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal([]byte(l), &m) == nil && m.Method != "" && len(m.ID) == 0
}

func responseKey(l string) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(l), &m) != nil {
		return ""
	}
	return string(m.ID)
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uuid>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "<time>"},
	{regexp.MustCompile(`"version":"[^"]*"`), `"version":"<version>"`},
	{regexp.MustCompile(`pv_[A-Za-z0-9_-]+`), "<token>"},
	{regexp.MustCompile(`"ms":[0-9.]+`), `"ms":0`},
	{regexp.MustCompile(`(seconds\\?"):[0-9.e-]+`), `$1:0`},
	{regexp.MustCompile(`"transport":"[^"]*"`), `"transport":"<transport>"`},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "<addr>"},
}

// normalize rewrites what differs run to run: keys sorted (numbers keep
// their digits), a batch's replies sorted by id (they are answered
// concurrently), and ids, tokens, times and versions replaced.
func normalize(l string) string {
	dec := json.NewDecoder(strings.NewReader(l))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil {
		if elems, ok := v.([]any); ok {
			sort.Slice(elems, func(i, j int) bool { return fmt.Sprint(idOf(elems[i])) < fmt.Sprint(idOf(elems[j])) })
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(v) == nil {
			l = strings.TrimSpace(b.String())
		}
	}
	for _, n := range normalizers {
		l = n.re.ReplaceAllString(l, n.with)
	}
	return l
}

func idOf(v any) any {
	if m, ok := v.(map[string]any); ok {
		return m["id"]
	}
	return nil
}
