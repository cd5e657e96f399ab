# The Store Order Service. `make run` serves demo data; `make test` runs every test.
GO      ?= go
BIN     := bin/orderd
RUN_DIR := .run
ADDR    ?= 127.0.0.1:8080

.PHONY: bench all generate check-generated api-diff docs-assets check-docs-assets build run test test-deps lint tsclient-check vet fuzz vulncheck clean

all: build

# Files generated from the two documents of the contract, openapi.yaml (v1) and
# openapi-v2.yaml (v2): each version's server (gen/, genv2/) and the example's clients.
GENERATED := gen/api.gen.go genv2/api.gen.go examples/client/orderclient/client.gen.go examples/client/orderclientv2/client.gen.go
CONTRACTS := openapi.yaml openapi-v2.yaml

## generate: regenerate gen/, genv2/ and the example clients from openapi.yaml and openapi-v2.yaml
generate:
	cd gen && $(GO) generate ./...
	cd genv2 && $(GO) generate ./...
	cd examples/client/orderclient && $(GO) generate ./...
	cd examples/client/orderclientv2 && $(GO) generate ./...

## check-generated: fail if a generated file differs from what the documents produce
check-generated:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  for f in $(GENERATED); do mkdir -p "$$tmp/$$(dirname $$f)" && cp "$$f" "$$tmp/$$f"; done && \
	  $(MAKE) --no-print-directory generate >/dev/null && \
	  status=0 && for f in $(GENERATED); do \
	    if ! diff -u "$$tmp/$$f" "$$f"; then cp "$$tmp/$$f" "$$f"; status=1; fi; done; \
	  if [ $$status != 0 ]; then \
	    echo "generated code is not what openapi.yaml and openapi-v2.yaml generate: run 'make generate' and commit (never edit it by hand)" >&2; \
	    exit 1; \
	  fi; echo "generated code is up to date"

# oasdiff, pinned in its own module file (tools/oasdiff.mod), so that its dependencies (a newer
# kin-openapi among them) never move the service's.
OASDIFF := bin/oasdiff

## api-diff: fail on a breaking change of openapi.yaml or openapi-v2.yaml since its copy in api/released that CHANGELOG.md does not list (docs/api-evolution.md)
api-diff:
	$(GO) build -modfile=tools/oasdiff.mod -o $(OASDIFF) github.com/oasdiff/oasdiff
	$(GO) run ./tools/apidiff -oasdiff $(OASDIFF) -changelog CHANGELOG.md -released api/released

# `orderd version` names the commit: stamped from git when there is one, since a GOFLAGS of
# -buildvcs=false (or a copy without .git) leaves the build's own record without it.
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := $(if $(VERSION),-X main.version=$(VERSION)) $(if $(COMMIT),-X main.commit=$(COMMIT))

## build: build bin/orderd
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/orderd

## run: serve the demo orders in embedded mode from $(RUN_DB), with a fresh demo key per plan
# The file is kept from one run to the next: a cancel made in one run is still there in the
# next, since import never undoes one (`make clean` starts over). ORDERD_REDIS_URL is emptied
# for each command: `make run` is the embedded demo, and a Redis URL exported in the shell
# would otherwise take every command to Redis.
RUN_DB  := $(RUN_DIR)/orderd.db
RUN_BIN := ORDERD_REDIS_URL= $(BIN)
# A second `make run` while one serves must not replace the first one's keys: it stops before
# touching anything when something answers on $(ADDR) (bash's /dev/tcp connects; an empty
# host is this machine).
run: build
	@if timeout 2 bash -c 'a="$(ADDR)"; h="$${a%:*}"; h="$${h#[}"; h="$${h%]}"; exec 3<>"/dev/tcp/$${h:-127.0.0.1}/$${a##*:}"' 2>/dev/null; then \
	  echo "make run: $(ADDR) is in use (another 'make run'?); nothing was changed. Stop it, or use another address: make run ADDR=127.0.0.1:8081" >&2; exit 1; fi
	@mkdir -p $(RUN_DIR)
	@$(RUN_BIN) import --db $(RUN_DB) --orders testdata/demo/orders.json --pets testdata/demo/pets.json
	@for p in free pro business enterprise; do $(RUN_BIN) keys revoke demo-$$p --db $(RUN_DB) >/dev/null 2>&1; done; \
	  echo "Demo API keys (new on every 'make run'; kept as hashes in $(RUN_DB)):"; \
	  for p in free pro business; do \
	    key=$$($(RUN_BIN) keys create --plan $$p --name demo-$$p --db $(RUN_DB) 2>/dev/null) || exit 1; \
	    printf '  %-10s %s\n' $$p "$$key"; [ $$p = free ] && free=$$key; done; \
	  key=$$($(RUN_BIN) keys create --plan enterprise --per-minute 5000 --per-day 1000000 \
	    --name demo-enterprise --db $(RUN_DB) 2>/dev/null) || exit 1; \
	  printf '  %-10s %s\n' enterprise "$$key"; \
	  echo; echo "Try:"; \
	  echo "  curl -i -H 'Authorization: Bearer $$free' http://$(ADDR)/v1/store/orders"; \
	  echo "  curl -i -X DELETE -H 'Authorization: Bearer $$free' http://$(ADDR)/v1/store/orders/2"; echo
	$(RUN_BIN) serve --addr $(ADDR) --db $(RUN_DB)

## test: every test, with the race detector; Redis and browser tests use the real programs
test: test-deps
	$(GO) test -race -count=1 ./...

# The tests never skip for want of redis-server or chromium: install them, or say how.
TEST_DEPS := redis-server:redis-server chromium:chromium

## test-deps: install redis-server and chromium (Debian packages, as root with apt-get) if they are missing
# It says first what is missing and what it will install, so that nothing is installed unannounced.
test-deps:
	@missing=; for dep in $(TEST_DEPS); do cmd=$${dep%%:*}; pkg=$${dep#*:}; \
	  command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	  [ -z "$$missing" ] && exit 0; \
	  if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	    echo "make test needs the Debian packages$$missing; installing them takes root and apt-get: install them and run it again" >&2; exit 1; \
	  fi; \
	  echo "make test needs the Debian packages$$missing: installing them with apt-get (as root)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null

# Swagger UI files served at /docs, from the npm package pinned in package.json.
DOCS_ASSETS := swagger-ui-bundle.js swagger-ui-standalone-preset.js swagger-ui.css LICENSE NOTICE

## docs-assets: copy Swagger UI from node_modules into internal/docs/assets (after npm ci)
docs-assets:
	npm ci --no-audit --no-fund --loglevel=error
	for f in $(DOCS_ASSETS); do cp node_modules/swagger-ui-dist/$$f internal/docs/assets/$$f; done

## check-docs-assets: fail if the embedded Swagger UI is not the pinned one (after npm ci)
check-docs-assets:
	@for f in $(DOCS_ASSETS); do cmp -s node_modules/swagger-ui-dist/$$f internal/docs/assets/$$f || { \
	  echo "internal/docs/assets/$$f is not swagger-ui-dist's: run 'make docs-assets' and commit" >&2; exit 1; }; done; \
	  echo "docs assets are the pinned swagger-ui-dist"

## vet: gofmt, go vet and staticcheck (pinned in tools.go)
vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change: $$out" >&2; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck ./...

# Redocly CLI runs offline: no usage report, no update notice.
REDOCLY_ENV := REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
# The TypeScript client check: check.ts compiled against the types made from openapi.yaml.
TSCLIENT := testdata/tsclient

## lint: Spectral (spectral:oas, OWASP) and Redocly (redocly.yaml) over both documents, the TypeScript client check, vet
lint: vet
	npm ci --no-audit --no-fund --loglevel=error
	npx --no-install spectral lint --fail-severity=warn $(CONTRACTS)
	npx --no-install spectral lint --fail-severity=warn -r .spectral-owasp.yaml $(CONTRACTS)
	$(REDOCLY_ENV) npx --no-install redocly lint --config redocly.yaml $(CONTRACTS)
	$(MAKE) --no-print-directory tsclient-check

## tsclient-check: generate TypeScript types from openapi.yaml, compile $(TSCLIENT)/check.ts with tsc --strict (after npm ci)
tsclient-check:
	npx --no-install openapi-typescript openapi.yaml -o $(TSCLIENT)/openapi.gen.ts
	npx --no-install tsc -p $(TSCLIENT)
	@echo "the TypeScript client compiles against openapi.yaml"

# Fuzz targets, as package:target:executions. CI runs each for its count of executions, about
# ten seconds here: a count, not a duration, because Go 1.26's fuzzer can fail a target with a
# bare "context deadline exceeded" when a duration ends while a worker is busy (golang/go#75804,
# fixed in Go 1.27), which a loaded machine makes likely. FUZZTIME=30s (any -fuzztime) overrides
# the counts for a longer run by hand.
FUZZ_TARGETS := ./internal/api:FuzzHandler:8000 ./internal/api:FuzzCancelOrderID:12000 ./internal/api:FuzzFindQuery:8000 ./internal/api:FuzzDateTimeFault:50000 ./internal/api:FuzzBearerToken:500000 ./internal/pagetoken:FuzzRead:300000
FUZZTIME ?=

## fuzz: run every fuzz target for its count of executions, or FUZZTIME (its seeds also run in make test)
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; count=$${rest#*:}; \
	  fuzztime=$(if $(FUZZTIME),$(FUZZTIME),$${count}x); echo "fuzz $$name ($$pkg) for $$fuzztime"; \
	  $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$$fuzztime -timeout=5m $$pkg || exit 1; done

## bench: orderd against its ceiling with wrk, embedded and Redis; writes docs/benchmarks.md
bench:
	bash bench/run.sh

## vulncheck: govulncheck (pinned in tools.go); needs the vulnerability database, so not in CI
vulncheck:
	$(GO) run golang.org/x/vuln/cmd/govulncheck ./...

clean:
	rm -rf bin $(RUN_DIR)
