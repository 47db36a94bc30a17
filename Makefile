# wicket — everything CI checks is `make test`; `make demo` shows the whole loop.
# Tools are installed with `go install` at pinned versions into ./bin.

GO          ?= go
BIN         := $(CURDIR)/bin
STATICCHECK := $(BIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
# testrun runs go test and prints what it prints, then the slowest 10 tests of the run.
TESTRUN     := $(BIN)/testrun
# Per-test-binary timeout; the whole suite must stay well inside 15 minutes on 2 cores.
TEST_TIMEOUT ?= 12m

# Platforms beyond the host that CI builds for, so nothing Linux-only creeps into shared code.
CROSS ?= linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

.PHONY: release-snapshot all build test test-short fmt-check vet staticcheck tidy-check subject-check hooks cross unit chromium conformance ext-apps bench docs demo clean talib-fixtures pgo

# The official MCP conformance suite, pinned with its whole dependency tree in
# testdata/conformance/package-lock.json (0.1.13 runs on Node 20; later ones need Node 22),
# installed by `npm ci` into an ignored folder (bounded in time) and run against `wicket mcp --http`.
CONFORMANCE_PIN     := testdata/conformance/package.json testdata/conformance/package-lock.json
CONFORMANCE_VERSION := $(shell sed -n 's/.*"@modelcontextprotocol\/conformance": *"\([^"]*\)".*/\1/p' testdata/conformance/package.json | head -n 1)
CONFORMANCE_DIR     := $(BIN)/conformance
CONFORMANCE         := $(CONFORMANCE_DIR)/.installed
# The MCP Apps SDK's host side (@modelcontextprotocol/ext-apps), pinned the same way in
# testdata/extapps, checks run_backtest's tear sheet view (testdata/extapps/check.mjs).
EXTAPPS_PIN := testdata/extapps/package.json testdata/extapps/package-lock.json
EXTAPPS_DIR := $(BIN)/ext-apps
EXTAPPS     := $(EXTAPPS_DIR)/.installed
# The version serverInfo reports: a tag or commit when git knows one.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

all: build

PGO ?= $(if $(wildcard $(BIN)/default.pgo),$(BIN)/default.pgo,off)
build:
	$(GO) build -pgo=$(PGO) -ldflags "-X main.version=$(VERSION)" -o $(BIN)/wicket ./cmd/wicket

test: fmt-check vet staticcheck tidy-check subject-check cross unit conformance ext-apps

# The inner loop of development: formatting, vet and every test in -short mode without the race
# detector, cross checks, staticcheck or the conformance suite (aim: under 3 minutes on 2 cores).
test-short: fmt-check vet $(TESTRUN)
	GO=$(GO) $(TESTRUN) -short -timeout $(TEST_TIMEOUT) ./...

# cross type-checks every package, tests included, for each of $(CROSS) from source
# (internal/crosscheck): what a cross build would refuse, without compiling the dependency graph
# once per target.
cross:
	$(GO) run ./internal/crosscheck $(CROSS)

$(TESTRUN): internal/testrun/main.go
	$(GO) build -o $@ ./internal/testrun

# Commit subjects are at most 72 characters (the why goes in the body), checked for every commit
# after SUBJECTS_SINCE, the last one made before the rule; `make hooks` checks each new commit too.
SUBJECTS_SINCE ?= 8d0a998
subject-check:
	@.githooks/check-subjects --since $(SUBJECTS_SINCE)

hooks:
	git config core.hooksPath .githooks

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

# A race-built program sleeps GORACE's atexit_sleep_ms (1 s by default) before it exits with 0; the
# tests start such programs thousands of times (the scripts' wicket, strategy workers), and without
# the sleep cmd/wicket's tests take 205 s instead of 371 s. Races are still reported when they happen.
UNIT_GORACE ?= atexit_sleep_ms=0
# Long tests that run once, without the race detector: their minutes go to one goroutine's arithmetic
# (Starlark decisions replayed over long tapes, lookahead proofs over thousands of prefixes, TA-Lib's
# reference values, long runs' moments), which race instrumentation slows 7 to 20 times, while the
# concurrency they pass through runs race-built in shorter tests of the same code (deploy's restarts,
# crashes and short forward tests; the proof's TestProofOfLazyCrosses; research's
# TestSweepWorkersAgree and TestWarmSweepsAgree). Measured on 2 cores: race-built, these took 585 s
# of one core inside make test (deploy's equality tests another 420 s), plain about 80 s (and 42 s).
PLAIN_NAMES := TestFuturesLongShortDeploymentEqualsBacktest TestFuturesReplayChargesStoredFunding \
	TestDeployPortfolioRestart TestDeployPortfolioDriftPastTheReportWindow TestDeployPortfolioAttributionSumsToTheGap \
	TestDeployAttributionOfAnEqualForwardTest TestDeployBooksByTheBook TestDeployReportReplaysExits \
	TestProofKeepsBoundedSeries TestProofCatchesSparseLeak TestProofCatchesOneBarIn64 TestProofCatchesLateLeak \
	TestChainedProofBoundsSnapshots TestChainedProofFallsBack TestCatalogPrefixExactLong TestLeakAttempts \
	TestSweepGolden TestWalkForwardGolden TestTALibReference TestPowerMomentsOverLongRuns
space := $(subst ,, )
PLAIN_TESTS := ForwardTestEqualsBacktest|^($(subst $(space),|,$(strip $(PLAIN_NAMES))))$$
PLAIN_PKGS := ./deploy ./strategy/script ./strategy/research ./strategy/ta ./strategy/backtest
unit: chromium $(TESTRUN)
	GORACE="$(UNIT_GORACE) $(GORACE)" GO=$(GO) $(TESTRUN) -race -timeout $(TEST_TIMEOUT) -skip '$(PLAIN_TESTS)' ./...
	GO=$(GO) $(TESTRUN) -slowest 5 -timeout $(TEST_TIMEOUT) -run '$(PLAIN_TESTS)' $(PLAIN_PKGS)

# Headless Chromium for strategy/tearsheet's browser test: the Debian package, installed with apt-get
# only when neither chromium nor chromium-browser is on PATH and this runs as root with apt (bounded
# in time; the package lists are fetched only when the install cannot find the package). Otherwise,
# or when the install fails, the test skips with one line. Nothing happens when it is installed.
CHROMIUM_TIMEOUT ?= 300
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "chromium: not installed, and installing it needs root and apt-get; the tear sheet browser test will skip"; \
	else \
		echo "chromium: installing the Debian package with apt-get (at most $(CHROMIUM_TIMEOUT)s)"; \
		timeout $(CHROMIUM_TIMEOUT) sh -c 'export DEBIAN_FRONTEND=noninteractive; \
			apt-get install -y --no-install-recommends chromium || { apt-get update && apt-get install -y --no-install-recommends chromium; }' \
			|| echo "chromium: the install failed; the tear sheet browser test will skip"; \
	fi

# Reinstalled whenever the pin changes; a failed install leaves no .installed behind.
$(CONFORMANCE): $(CONFORMANCE_PIN) testdata/conformance/install.sh
	@testdata/conformance/install.sh $(CONFORMANCE_DIR)

conformance: build
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "conformance: SKIPPED — npm is not installed (Node 20+ runs @modelcontextprotocol/conformance@$(CONFORMANCE_VERSION))"; \
	else \
		$(MAKE) --no-print-directory $(CONFORMANCE) && testdata/conformance/run.sh $(BIN)/wicket $(CONFORMANCE_DIR); \
	fi

$(EXTAPPS): $(EXTAPPS_PIN) testdata/conformance/install.sh
	@testdata/conformance/install.sh $(EXTAPPS_DIR) 180 testdata/extapps

ext-apps: build
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "ext-apps: SKIPPED — npm is not installed (Node 20+ runs the pinned @modelcontextprotocol/ext-apps)"; \
	else \
		$(MAKE) --no-print-directory $(EXTAPPS) && cp testdata/extapps/check.mjs $(EXTAPPS_DIR)/ && node $(EXTAPPS_DIR)/check.mjs $(BIN)/wicket; \
	fi

# The sweep's yardstick is a numba loop (strategy/research/testdata/ref_sma.py);
# without numba for /usr/bin/python3 the sweep ratios say how to install it.
# -p 1: one package's benchmarks at a time, so they do not time each other.
bench:
	@mkdir -p $(BIN)
	@/usr/bin/python3 -c 'import numba' 2>/dev/null || echo "note: the sweep reference needs numba: apt-get install -y python3-numba (then /usr/bin/python3 has it)"
	$(GO) test -p 1 -run '^$$' -bench . -benchmem -timeout 30m ./... | tee $(BIN)/bench.txt
	@echo; echo "ratios:"; grep -E '^ratio' $(BIN)/bench.txt || true

# Profile-guided optimisation, opt in: bin/default.pgo is the CPU profile of a worker's sweep chunks
# (BenchmarkSweepChunk, one core, the reference's grid on 17,544 and 1,000,000 bars), and `make build`
# uses it when it is there. It is not committed as cmd/wicket/default.pgo: it gave at most 2.5 % CPU a
# combination (within noise), and every build of the binary would compile its dependencies twice.
pgo:
	@mkdir -p $(BIN)
	$(GO) test -run '^$$' -bench 'SweepChunk/(bars=17544|bars=1000000|demo)' -benchtime 3x -cpu 1 \
		-cpuprofile $(BIN)/pgo-chunk.pprof -o $(BIN)/pgo-handlers.test ./strategy/worker/handlers
	$(GO) tool pprof -proto $(BIN)/pgo-chunk.pprof > $(BIN)/default.pgo

# A release built on this machine, published nowhere: linux/darwin/windows x amd64/arm64 archives in
# dist/, one SPDX SBOM per binary (internal/release/sbomtool, from the binary's own build
# information), then one MCPB bundle per platform, dist/server.json listing them with their hashes,
# an OCI image (dist/wicket_VERSION_oci.tar: distroless-style, non-root, built without a daemon) and
# a Homebrew formula (dist/wicket.rb), all in the checksums file (internal/release). Not part of
# `make test`.
# GoReleaser is installed once per version as bin/goreleaser-VERSION (a new pin installs anew; an
# existing one is reused, never rebuilt); sbomtool is rebuilt only when its sources change. Each
# target is compiled once, by GoReleaser; mcpbundle reuses those binaries.
GORELEASER_VERSION := v2.15.1
GORELEASER         := $(BIN)/goreleaser-$(GORELEASER_VERSION)
SBOMTOOL           := $(BIN)/sbomtool
$(GORELEASER):
	GOBIN=$(BIN)/.install-goreleaser $(GO) install -trimpath -ldflags="-s -w" github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)
	mv $(BIN)/.install-goreleaser/goreleaser $@ && rmdir $(BIN)/.install-goreleaser
$(SBOMTOOL): $(wildcard internal/release/sbom/*.go internal/release/sbomtool/*.go)
	$(GO) build -o $@ ./internal/release/sbomtool
release-snapshot: $(GORELEASER) $(SBOMTOOL)
	$(GORELEASER) check
	PATH="$(BIN):$$PATH" $(GORELEASER) release --snapshot --clean
	$(GO) run ./internal/release/mcpbundle dist server.json

docs: build
	$(BIN)/wicket demo --docs docs/mcp-tools.md

demo: build
	$(BIN)/wicket demo

clean:
	rm -rf $(BIN)

# Regenerates testdata/talib (the TA-Lib C reference) and strategy/ta/htsincos_table.go with the real
# TA-Lib C library (npm talib 2.0.5); needs node, npm, gcc and the npm registry. Not part of `make test`.
talib-fixtures:
	bash testdata/talib/gen/generate.sh
