# offshoot — set-up and checks. `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# The Node everything runs on: the one first on PATH when offshoot supports it (22.16 or later), otherwise the pinned
# LTS, which scripts/node-env.sh fetches from the npm registry into .cache/node/ (it carries the headers a native
# addon build needs, so npm builds better-sqlite3, which LangGraph's stock saver and evalite use, against them).
NODE_DIR := $(shell scripts/node-env.sh --select)
export PATH := $(NODE_DIR):$(PATH)
ifneq ($(wildcard $(NODE_DIR)/../include/node/node.h),)
export npm_config_nodedir := $(abspath $(NODE_DIR)/..)
endif
# One install per Node ABI: native addons built for one major do not load on another.
STAMP := node_modules/.offshoot-install-stamp-$(shell $(NODE_DIR)/node -p process.versions.modules)
TSC := node_modules/.bin/tsc
BIOME := node_modules/.bin/biome

.PHONY: all install build check format test test-rgw test-python demo bench soak fuzz torture clean llms plugin-check test-pack pack bench-summary

all: build

$(STAMP): package.json package-lock.json packages/offshoot/package.json packages/client/package.json packages/tools/package.json \
		packages/offshoot-db-client/package.json packages/langgraph/package.json \
		packages/ai-sdk/package.json packages/evalite/package.json
	npm ci --no-audit --no-fund --loglevel=error
	@# npm ci keeps a node_modules that matches the lockfile, addons built for another Node included.
	node -e 'new (require("better-sqlite3"))(":memory:")' 2>/dev/null || npm rebuild better-sqlite3 --loglevel=error
	touch $@

install: $(STAMP)

build: install
	$(TSC) -p packages/client/tsconfig.json
	$(TSC) -p packages/tools/tsconfig.json
	$(TSC) -p packages/offshoot-db-client/tsconfig.json
	$(TSC) -p packages/offshoot/tsconfig.json
	node scripts/build-web.mjs
	node scripts/bundle-cli.mjs
	$(TSC) -p packages/langgraph/tsconfig.json
	$(TSC) -p packages/ai-sdk/tsconfig.json
	$(TSC) -p packages/evalite/tsconfig.json

check: build
	$(BIOME) check .
	node scripts/check-layers.mjs
	node scripts/gen-llms.mjs --check
	node scripts/check-markdown.mjs
	$(TSC) -p packages/offshoot/tsconfig.check.json
	$(TSC) -p packages/client/tsconfig.check.json
	$(TSC) -p packages/tools/tsconfig.check.json
	$(TSC) -p packages/offshoot/web/tsconfig.json
	scripts/test-python.sh lint
	$(TSC) -p packages/langgraph/tsconfig.check.json
	$(TSC) -p packages/ai-sdk/tsconfig.check.json
	$(TSC) -p packages/evalite/tsconfig.check.json
	$(TSC) -p examples/tsconfig.json

# The whole suite on the Node above, then a fast subset on every other supported major (scripts/test-node-matrix.sh).
test: build check
	scripts/browser-env.sh
	scripts/reflink-env.sh
	scripts/strace-env.sh
	scripts/timed.sh "node suite" scripts/with-s3-server.sh scripts/run-tests.sh
	scripts/timed.sh "python suite" scripts/test-python.sh test
	scripts/timed.sh "langgraph validation" scripts/test-runners.sh
	scripts/timed.sh "node matrix" scripts/test-node-matrix.sh

# The Python packages alone: their checks and tests (installs .venv-py/ on first use).
test-python: build
	scripts/test-python.sh

# The S3 suites again on Ceph's RADOS Gateway, a real distributed object store (scripts/rgw-server.sh installs it).
RGW_SUITES := test/store/s3-conformance test/store/s3-probe test/s3e2e/quickstart-s3 test/s3e2e/property-s3 \
	test/s3e2e/fork-requests test/daemon/multi-daemon.test
test-rgw: build
	scripts/timed.sh "rgw suites" scripts/with-s3-server.sh --server rgw scripts/run-tests.sh $(RGW_SUITES)

demo: build
	scripts/demo.sh

bench: bench-summary
	OFFSHOOT_BENCH_PYTHON="$$(scripts/python-env.sh)" scripts/with-s3-server.sh node --import tsx packages/offshoot/bench/run.ts
	OFFSHOOT_BIN=./offshoot "$$(scripts/python-env.sh)" python/offshoot/bench/roundtrip.py
	node --import tsx packages/langgraph/bench/saver-bench.ts

# The table and chart at the top of docs/benchmarks.md (writes docs/bench-summary.json and .svg, and the page's table).
bench-summary: build
	node --import tsx packages/offshoot/bench/summary-bench.ts

# The eval loop left running for DURATION seconds (or EPISODES episodes): forks written, graded and left to expire
# by TTL under the janitor; then each long-lived server (daemon, mcp stdio and -http in both eras, ui) for
# SERVER_SECONDS under good and refused requests. Fails on an error, a divergence, a wrong answer, or store bytes,
# RSS or descriptors that do not stay flat.
soak: build
	OFFSHOOT_SOAK_SECONDS=$${DURATION:-600} OFFSHOOT_SOAK_EPISODES=$${EPISODES:-0} node --import tsx packages/offshoot/bench/soak.ts
	OFFSHOOT_SOAK_SERVER_SECONDS=$${SERVER_SECONDS:-120} node --import tsx packages/offshoot/bench/server-soak.ts

fuzz: build
	OFFSHOOT_FUZZ_CASES=$${OFFSHOOT_FUZZ_CASES:-500000} scripts/run-tests.sh fuzz

# One torture at a time, each with the machine to itself; LANES sets the daemon torture's concurrent sessions.
torture: build
	OFFSHOOT_TEST_CONCURRENCY=1 OFFSHOOT_TORTURE_LANES=$${LANES:-6} OFFSHOOT_TORTURE_SECONDS=$${DURATION:-300} scripts/run-tests.sh torture

# The Claude Code plugin, validated by Claude Code itself (installs its CLI under .tmp/ once).
plugin-check:
	scripts/validate-plugin.sh

# make pack's tarballs installed for real into empty prefixes, install scripts run (better-sqlite3, which LangGraph's
# stock saver brings, builds from source) and served with `npx -y --package <tarball> offshoot mcp`; its wheels
# installed into empty venvs by pip and uv with no index; every package checked ready to publish (npm publish
# --dry-run, twine check); every docs/integrations page's install line and quickstart run in an empty directory
# (test/pack/ shares one pack, made here). Many minutes of installs, so CI runs it beside make test-rgw.
test-pack: build
	rm -rf .tmp/test-pack
	node scripts/pack.mjs .tmp/test-pack/npm >/dev/null
	scripts/pack-python.sh .tmp/test-pack/python >/dev/null
	OFFSHOOT_PACKED_DIR="$(CURDIR)/.tmp/test-pack" OFFSHOOT_PACK_FULL_INSTALL=1 OFFSHOOT_TEST_TIMEOUT_MS=2400000 \
		scripts/timed.sh "pack installs" scripts/run-tests.sh test/mcp/mcp-pack test/pack/

# Every npm workspace package as a tarball in dist/npm/, a dependency on a sibling package pointing at its tarball:
# `npm install ./dist/npm/*.tgz` works outside the repository (docs/installation.md); every Python package as a wheel
# and an sdist in dist/python/, for `pip install --find-links dist/python`. Nothing is published.
pack: build
	node scripts/pack.mjs
	scripts/pack-python.sh

# docs/llms.txt and docs/llms-full.txt from the docs (make check fails while they are stale).
llms:
	node scripts/gen-llms.mjs

format: install
	$(BIOME) check --write .

clean:
	rm -rf packages/*/dist
