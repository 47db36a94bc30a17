# wicket — everything CI checks is `make test`; `make demo` shows the whole loop.
# Tools are installed with `go install` at pinned versions into ./bin.

GO          ?= go
BIN         := $(CURDIR)/bin
STATICCHECK := $(BIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
# Per-test-binary timeout; the whole suite must stay well inside 15 minutes on 2 cores.
TEST_TIMEOUT ?= 12m

.PHONY: all build test fmt-check vet staticcheck tidy-check unit bench docs demo clean

all: build

build:
	$(GO) build -o $(BIN)/wicket ./cmd/wicket

test: fmt-check vet staticcheck tidy-check unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

$(STATICCHECK):
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

tidy-check:
	@$(GO) mod tidy -diff >/dev/null 2>&1 || { echo "go mod tidy would change go.mod/go.sum:"; $(GO) mod tidy -diff; exit 1; }

unit:
	$(GO) test -race -timeout $(TEST_TIMEOUT) ./...

# The sweep's yardstick is a numba loop (strategy/research/testdata/ref_sma.py);
# without numba for /usr/bin/python3 the sweep ratios say how to install it.
bench:
	@mkdir -p $(BIN)
	@/usr/bin/python3 -c 'import numba' 2>/dev/null || echo "note: the sweep reference needs numba: apt-get install -y python3-numba (then /usr/bin/python3 has it)"
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./... | tee $(BIN)/bench.txt
	@echo; echo "ratios:"; grep -E '^ratio' $(BIN)/bench.txt || true

docs: build
	$(BIN)/wicket demo --docs docs/mcp-tools.md

demo: build
	$(BIN)/wicket demo

clean:
	rm -rf $(BIN)
