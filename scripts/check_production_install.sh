#!/usr/bin/env bash
# The production install works on its own: a virtualenv with requirements/base.txt alone
# (none of the test or tooling packages) passes `manage.py check --deploy` with the
# production settings, and imports every module under approvals/, config/ and
# templates_engine/ (scripts/production_imports.py). Fails, naming the module and the
# package, when production code imports a package that only requirements/test.txt has.
#
#   scripts/check_production_install.sh           # `make check-production`
#   scripts/check_production_install.sh --fresh   # in a new temporary virtualenv
#
# The virtualenv is kept in .venv-base/ (git-ignored) and built again only when
# base.txt or the interpreter changes. PYTHON names the interpreter (python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON=${PYTHON:-python3}
BASE=requirements/base.txt
VENV=.venv-base
if [[ ${1:-} == --fresh ]]; then
	VENV=$(mktemp -d "${TMPDIR:-/tmp}/approvals-base.XXXXXX")
	trap 'rm -rf "$VENV"' EXIT
elif [[ $# -gt 0 ]]; then
	echo "usage: $0 [--fresh]" >&2
	exit 2
fi

started=$SECONDS
# Bump the last field when the way the virtualenv is built changes.
interpreter=$("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')
key="$(sha256sum "$BASE" | cut -d' ' -f1) $interpreter 1"
if [[ ! -f $VENV/.base-key || $(cat "$VENV/.base-key") != "$key" ]]; then
	echo "== building $VENV from $BASE alone"
	rm -rf "$VENV"
	"$PYTHON" -m venv "$VENV"
	log="$VENV/install.log"
	# --no-deps: base.txt must pin every package production needs (pip check below).
	# setuptools comes with a new virtualenv on Python 3.11 only; nothing of ours needs it.
	if ! { "$VENV/bin/pip" install --no-deps -r "$BASE" &&
		"$VENV/bin/pip" uninstall --yes setuptools; } >"$log" 2>&1; then
		cat "$log" >&2
		echo "FAILED: pip could not install $BASE" >&2
		exit 1
	fi
	echo "$key" >"$VENV/.base-key"
else
	echo "== reusing $VENV ($BASE unchanged)"
fi
if ! "$VENV/bin/pip" check; then
	echo "FAILED: $BASE does not pin every package its packages need (make requirements)" >&2
	exit 1
fi
# The Procfile's programs.
"$VENV/bin/gunicorn" --version
"$VENV/bin/celery" --version >/dev/null

# Production's environment and nothing else (no DJANGO_SETTINGS_MODULE of the tests, no
# PYTHONPATH into the development virtualenv): DEBUG off, HTTPS, a long random secret key,
# the database and broker the README names, attachments and the archive in S3 buckets.
# Nothing connects to the database, the broker or S3.
secret() { "$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(48))'; }
production_env=(
	env -i
	PATH="$PWD/$VENV/bin:/usr/local/bin:/usr/bin:/bin"
	HOME="$HOME"
	LANG=C.UTF-8
	TMPDIR="${TMPDIR:-/tmp}"
	DJANGO_SETTINGS_MODULE=config.settings
	DEBUG=false
	SECRET_KEY="$(secret)"
	ALLOWED_HOSTS=approvals.example.com
	DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals
	CELERY_BROKER_URL=redis://127.0.0.1:6379/0
	APPROVALS_AUDIT_SEAL_KEY="$(secret)"
	APPROVALS_METRICS_TOKEN="$(secret)"
	APPROVALS_BASE_URL=https://approvals.example.com
	DEFAULT_FROM_EMAIL="Approvals <approvals@example.com>"
	APPROVALS_S3_BUCKET=approvals-files
	APPROVALS_ARCHIVE_S3_BUCKET=approvals-archive
	APPROVALS_S3_REGION=eu-west-1
	APPROVALS_ARCHIVE_S3_REGION=eu-west-1
	# WhiteNoise looks for STATIC_ROOT when the WSGI app loads; collectstatic (the
	# Procfile's release step) has not run here.
	PYTHONWARNINGS="ignore:No directory at:UserWarning"
)

echo "== importing every production module"
"${production_env[@]}" "$VENV/bin/python" scripts/production_imports.py
echo "== manage.py check --deploy --fail-level WARNING"
"${production_env[@]}" "$VENV/bin/python" manage.py check --deploy --fail-level WARNING
echo "== production install OK ($((SECONDS - started)) s)"
