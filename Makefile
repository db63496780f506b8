# offshoot — set-up and checks. `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
STAMP := node_modules/.offshoot-install-stamp
TSC := node_modules/.bin/tsc
BIOME := node_modules/.bin/biome

.PHONY: all install build check format test test-rgw demo bench fuzz torture clean

all: build

$(STAMP): package.json package-lock.json packages/offshoot/package.json packages/client/package.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

install: $(STAMP)

build: install
	$(TSC) -p packages/client/tsconfig.json
	$(TSC) -p packages/offshoot/tsconfig.json
	node scripts/build-web.mjs

check: install
	$(BIOME) check .
	node scripts/check-layers.mjs
	$(TSC) -p packages/offshoot/tsconfig.check.json
	$(TSC) -p packages/client/tsconfig.check.json
	$(TSC) -p packages/offshoot/web/tsconfig.json

test: build check
	scripts/browser-env.sh
	scripts/with-s3-server.sh scripts/run-tests.sh

# The S3 suites again on Ceph's RADOS Gateway, a real distributed object store (scripts/rgw-server.sh installs it).
RGW_SUITES := test/store/s3-conformance test/store/s3-probe test/s3e2e/quickstart-s3 test/s3e2e/property-s3 \
	test/s3e2e/fork-requests test/daemon/multi-daemon.test
test-rgw: build
	scripts/with-s3-server.sh --server rgw scripts/run-tests.sh $(RGW_SUITES)

demo: build
	scripts/demo.sh

bench: build
	scripts/with-s3-server.sh node --import tsx packages/offshoot/bench/run.ts

fuzz: build
	OFFSHOOT_FUZZ_CASES=$${OFFSHOOT_FUZZ_CASES:-500000} scripts/run-tests.sh fuzz

# One torture at a time, each with the machine to itself; LANES sets the daemon torture's concurrent sessions.
torture: build
	OFFSHOOT_TEST_CONCURRENCY=1 OFFSHOOT_TORTURE_LANES=$${LANES:-6} OFFSHOOT_TORTURE_SECONDS=$${DURATION:-300} scripts/run-tests.sh torture

format: install
	$(BIOME) check --write .

clean:
	rm -rf packages/*/dist
