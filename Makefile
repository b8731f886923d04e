# Developer entry points: `make run`, `make test`, `make bench`.

VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python

# The test suite and benchmarks run on the local PostgreSQL and Redis, with DEBUG off
# (the default) and so a SECRET_KEY of their own, over plain http.
SERVICE_ENV := DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals \
	CELERY_BROKER_URL=redis://127.0.0.1:6379/0 \
	SECRET_KEY=test-only-secret-key-never-used-in-production-4f9c2a7e1b \
	APPROVALS_HTTPS=false

# `make run` is development: DEBUG on, plain http, the built-in SECRET_KEY.
RUN_ENV := DEBUG=true

.PHONY: venv services lint fmt typecheck test test-fast test-explore run bench

venv: $(VENV)/.installed

$(PYTHON):
	python3 -m venv $(VENV)

# Reinstall only when requirements.txt changes.
$(VENV)/.installed: requirements.txt | $(PYTHON)
	$(BIN)/pip install -r requirements.txt
	touch $@

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
# xdist_group), property tests on fixed examples. The test that restarts the local
# PostgreSQL server runs alone first: under -n 2 it skips itself.
ALONE_TESTS := tests/approvals/durability/test_database_restart.py
test: venv services
	$(MAKE) lint
	$(MAKE) typecheck
	$(SERVICE_ENV) $(BIN)/pytest --hypothesis-profile=ci $(ALONE_TESTS)
	$(SERVICE_ENV) $(BIN)/pytest -n 2 --dist loadgroup --hypothesis-profile=ci

# The engine, unit and service tests in under a minute and a half: no browser, no
# processes started, nothing slow; the test databases are kept between runs.
FAST_TESTS := tests/engine tests/approvals/services tests/approvals/templates \
	tests/approvals/activities tests/approvals/workers tests/approvals/auth \
	tests/approvals/directory tests/approvals/notifications
test-fast: venv
	bash scripts/ensure_services.sh
	$(SERVICE_ENV) $(BIN)/pytest -n 2 --reuse-db -m "not browser and not topology and not slow" \
		$(FAST_TESTS)

# The property tests on fresh random examples, ten times as many (tests/properties.py).
test-explore: venv
	bash scripts/ensure_services.sh
	$(SERVICE_ENV) $(BIN)/pytest -n 2 --hypothesis-profile=explore -m hypothesis \
		$$(grep -rl "from hypothesis" tests)

run: venv
	$(RUN_ENV) $(PYTHON) manage.py migrate
	$(RUN_ENV) $(PYTHON) manage.py seed_demo
	$(RUN_ENV) $(PYTHON) manage.py serve 127.0.0.1:8000

bench: venv services
	bash scripts/ensure_debian_package.sh /usr/bin/wrk wrk
	$(SERVICE_ENV) $(PYTHON) bench/run_all.py
