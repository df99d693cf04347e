# cnpjgraph: `make run` starts the service with sample data; `make test` runs
# everything CI checks. Both start PostgreSQL (and Redis) when they are down.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
SAMPLE_DIR := $(CURDIR)/.data/sample
SAMPLE_COMPANIES ?= 2000

.PHONY: run build playground-assets test lint fmt-check vet unit fuzz bench bench-search bench-import generate-check clean

# -buildvcs=auto: the commit goes into the binary (cnpjgraph version, /metrics)
# even where GOFLAGS says -buildvcs=false, and a copy without git still builds.
build: playground-assets
	$(GO) build -buildvcs=auto -o $(BIN)/cnpjgraph ./cmd/cnpjgraph

# GraphiQL and React from the npm registry, pinned by playground/package-lock.json.
playground-assets:
	@scripts/playground-assets.sh

run: build
	@DATABASE_URL="$${DATABASE_URL:-$$(scripts/postgres.sh | sed 's#/postgres?#/cnpjgraph?#')}" \
	  SAMPLE_DIR="$(SAMPLE_DIR)" SAMPLE_COMPANIES="$(SAMPLE_COMPANIES)" \
	  $(BIN)/cnpjgraph dev

test: playground-assets fmt-check vet lint generate-check unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

$(GOLANGCI_LINT):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/golangci-lint $(GOLANGCI_LINT)

lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...

# Generated code must match the schema: regenerate and fail on any difference.
generate-check:
	@before=$$(git diff -- graph/ graphqlapi/ schema/ | sha256sum; git status --porcelain -- graph/ graphqlapi/ | sha256sum); \
	 $(GO) tool gqlgen generate || exit 1; \
	 after=$$(git diff -- graph/ graphqlapi/ schema/ | sha256sum; git status --porcelain -- graph/ graphqlapi/ | sha256sum); \
	 if [ "$$before" != "$$after" ]; then \
	   echo "generated code was stale: 'go tool gqlgen generate' changed graph/ or graphqlapi/; review and commit"; exit 1; \
	 fi

# The playground's browser test needs Debian's chromium; sdkcheck runs the
# official CNPJá client (npm).
unit:
	@scripts/test-tools.sh
	@scripts/sdk-check.sh
	@export TEST_DATABASE_URL="$${TEST_DATABASE_URL:-$$(scripts/postgres.sh)}"; \
	 export TEST_REDIS_URL="$${TEST_REDIS_URL:-$$(scripts/redis.sh)}"; \
	 $(GO) test -race -count=1 -timeout 15m ./...

fuzz:
	$(GO) test ./cnpj -run '^$$' -fuzz FuzzParse -fuzztime 30s
	$(GO) test ./auth -run '^$$' -fuzz FuzzVerifySignedURL -fuzztime 30s

bench-import: build
	@export DATABASE_URL="$${DATABASE_URL:-$$(scripts/postgres.sh | sed 's#/postgres?#/cnpjgraph_bench?#')}"; \
	 scripts/bench-import.sh

bench: build
	@export DATABASE_URL="$${DATABASE_URL:-$$(scripts/postgres.sh | sed 's#/postgres?#/cnpjgraph_bench?#')}"; \
	 scripts/bench.sh

# The search mix of make bench alone.
bench-search: build
	@export DATABASE_URL="$${DATABASE_URL:-$$(scripts/postgres.sh | sed 's#/postgres?#/cnpjgraph_bench?#')}"; \
	 BENCH_ONLY=search scripts/bench.sh

clean:
	rm -rf $(BIN) .data/sample
