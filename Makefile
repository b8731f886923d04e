# Developer entry points: `make run`, `make test`, `make bench`.

VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python

# The test suite and benchmarks run on the local PostgreSQL and Redis.
SERVICE_ENV := DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals \
	CELERY_BROKER_URL=redis://127.0.0.1:6379/0

.PHONY: venv services lint fmt typecheck test run bench

venv: $(VENV)/.installed

$(PYTHON):
	python3 -m venv $(VENV)

# Reinstall only when requirements.txt changes.
$(VENV)/.installed: requirements.txt | $(PYTHON)
	$(BIN)/pip install -r requirements.txt
	touch $@

services:
	bash scripts/ensure_services.sh
	bash scripts/ensure_browser.sh

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

fmt: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: venv
	$(BIN)/mypy

test: venv services
	$(MAKE) lint
	$(MAKE) typecheck
	$(SERVICE_ENV) $(BIN)/pytest

run: venv
	$(PYTHON) manage.py migrate
	$(PYTHON) manage.py seed_demo
	$(PYTHON) manage.py serve 127.0.0.1:8000

bench: venv services
	$(SERVICE_ENV) $(PYTHON) bench/run_all.py
