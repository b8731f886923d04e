# Developer entry points: `make run`, `make test`, `make bench`.
# Requirements by purpose (requirements/*.in, pinned in *.txt): base (production), test
# (tests, lint, type check), dev (test plus pip-tools); `.venv` holds dev.txt.

VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python

# The test suite and benchmarks run on the local PostgreSQL and Redis, with DEBUG off
# (the default) and so a SECRET_KEY of their own, over plain http.
SERVICE_ENV := DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals \
	CELERY_BROKER_URL=redis://127.0.0.1:6379/0 \
	SECRET_KEY=test-only-secret-key-never-used-in-production-4f9c2a7e1b \
	APPROVALS_HTTPS=false

# `make run` is development: DEBUG on, plain http, the built-in SECRET_KEY, and with no
# DATABASE_URL a private PostgreSQL in .pgdata/ that stops with it (config/devdb.py).
RUN_ENV := DEBUG=true
ADDRPORT ?= 127.0.0.1:8000

.PHONY: venv requirements check-production services lint fmt typecheck test test-fast test-explore test-pg18 ratio-guard run bench

venv: $(VENV)/.installed

$(PYTHON):
	python3 -m venv $(VENV)

# Reinstall only when a requirements/*.txt changes.
$(VENV)/.installed: $(wildcard requirements/*.txt) | $(PYTHON)
	$(BIN)/pip install -r requirements/dev.txt
	touch $@

# Pin requirements/*.in into *.txt, keeping the pins already there; each layer keeps the
# versions of the one below. Upgrades: `make requirements ARGS=--upgrade`, or one package
# with `ARGS="--upgrade-package django"`.
PIP_COMPILE := CUSTOM_COMPILE_COMMAND="make requirements" $(BIN)/pip-compile --quiet \
	--strip-extras --no-emit-index-url --no-emit-find-links $(ARGS)

requirements: venv
	$(PIP_COMPILE) --output-file requirements/base.txt requirements/base.in
	$(PIP_COMPILE) --output-file requirements/test.txt requirements/test.in
	$(PIP_COMPILE) --output-file requirements/dev.txt requirements/dev.in

# requirements/base.txt alone in .venv-base/ passes `check --deploy` and imports every
# production module (scripts/check_production_install.sh).
check-production:
	bash scripts/check_production_install.sh

services:
	bash scripts/ensure_services.sh
	bash scripts/ensure_debian_package.sh /usr/bin/chromium chromium
	bash scripts/ensure_debian_package.sh /usr/bin/pdftoppm poppler-utils
	bash scripts/ensure_debian_package.sh /usr/sbin/pgbouncer pgbouncer

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: venv
	$(BIN)/mypy

# The suite over both cores (pytest-xdist; tests that share something run in one
# xdist_group), property tests on fixed examples, then the embedded 18 (test-pg18).
test: venv services
	$(MAKE) lint
	$(MAKE) typecheck
	$(MAKE) check-production
	$(SERVICE_ENV) $(BIN)/pytest -n 2 --dist loadgroup --hypothesis-profile=ci
	$(MAKE) test-pg18
	-$(MAKE) ratio-guard

# Starts and decisions against django-viewflow at a small n, compared with the ratios in
# bench/ratio_history.jsonl: a drop of more than 25% prints a WARNING. It never fails the
# build (a shared machine is noisy); the statement counts are asserted by tests instead.
ratio-guard: venv
	$(SERVICE_ENV) BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals_ratio_guard \
		$(PYTHON) bench/inprocess.py --guard --n 300

# The engine, unit and service tests in under a minute and a half: no browser, no
# processes started, nothing slow; the test databases are kept between runs.
FAST_TESTS := tests/engine tests/approvals/services tests/approvals/templates \
	tests/approvals/activities tests/approvals/workers tests/approvals/auth \
	tests/approvals/directory tests/approvals/notifications $(wildcard tests/approvals/test_*.py)
test-fast: venv
	bash scripts/ensure_services.sh
	$(SERVICE_ENV) $(BIN)/pytest -n 2 --reuse-db -m "not browser and not topology and not slow" \
		$(FAST_TESTS)

# The property tests on fresh random examples, ten times as many (tests/properties.py).
test-explore: venv
	bash scripts/ensure_services.sh
	$(SERVICE_ENV) $(BIN)/pytest -n 2 --hypothesis-profile=explore -m hypothesis \
		$$(grep -rl "from hypothesis" tests)

# The suite runs on the machine's PostgreSQL (15, the oldest supported); the newest, the
# embedded 18, gets the migrations and the tests of what PostgreSQL itself does for us
# (row-level security, partitions, full-text search, the rollup's fold), and the
# README's first command runs on it in the suite (tests/approvals/test_first_run.py).
# (The round-trip counts need a TCP relay: the suite has them.) Being private, it is also
# the server the restart test may restart: the machine's is never restarted.
PG18_SMOKE := tests/approvals/access/test_row_level_security.py \
	tests/approvals/test_sql_files.py \
	tests/approvals/test_history_partitions.py \
	tests/approvals/pages/test_search_under_policy.py \
	tests/approvals/analytics/test_figures.py \
	tests/approvals/analytics/test_rollup_fold.py \
	tests/approvals/test_store.py \
	tests/approvals/audit/test_daily_seal.py \
	tests/approvals/durability/test_database_restart.py

test-pg18: venv
	APPROVALS_DEV_PGDATA=$(CURDIR)/.pgdata-test $(SERVICE_ENV) \
		$(PYTHON) -m config.devdb exec $(BIN)/pytest -p no:cacheprovider -q \
		--hypothesis-profile=ci $(PG18_SMOKE)

run: venv
	$(RUN_ENV) $(PYTHON) -m config.devdb run $(ADDRPORT)

bench: venv services
	bash scripts/ensure_debian_package.sh /usr/bin/wrk wrk
	$(SERVICE_ENV) $(PYTHON) bench/run_all.py
