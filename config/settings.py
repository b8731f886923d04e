"""Django settings.

Every knob is read from the environment and has a default that works on a laptop: the
development PostgreSQL that ``make run`` starts, an in-memory Celery broker and the
poller and activity runner in-process.
DEBUG is off unless DEBUG=true (``make run`` sets it); with DEBUG off the app refuses
the built-in SECRET_KEY and serves HTTPS-only (APPROVALS_HTTPS=false for plain http).
Production sets at least SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL and CELERY_BROKER_URL.
"""

import datetime as dt
import os
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from approvals.workers.jobs import PERIODIC_JOBS, beat_schedule
from config import devdb
from config.storage import archive_storage, attachments_storage

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc


def env_int_or_off(name: str, default: int | None) -> int | None:
    """An integer, or None when the variable says ``off``."""
    raw = os.environ.get(name)
    if raw is not None and raw.strip().lower() == "off":
        return None
    return env_int(name, default) if default is not None else None


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


# --- Core -----------------------------------------------------------------------------

_INSECURE_SECRET_KEY = "django-insecure-dev-only-change-me"

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", _INSECURE_SECRET_KEY)
if not DEBUG and SECRET_KEY == _INSECURE_SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Applications ---------------------------------------------------------------------

INSTALLED_APPS = [
    "approvals.apps.ApprovalsAdminConfig",  # django.contrib.admin, asking access.py
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our own static files, no CDN
    "django_filters",  # one search for the page and the API (approvals/web/search.py)
    "guardian",
    "axes",  # failed sign-in limits
    "csp",
    # No AppConfig of its own; listed for its admin templates and `graph_transitions`.
    "django_fsm",
    # The structured editor of workflow templates in the admin (static files only).
    "django_jsonform",
    "approvals",
    "approvals.notifications",
]

MIDDLEWARE = [
    "approvals.http.middleware.ConnectionCheckMiddleware",
    "approvals.http.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # The inbox API's reads (the 304 and the full page), before the session, auth and DRF
    # (approvals/api/inbox_revalidate.py), and before the CSP middleware: it puts the same
    # policy on its answers, built once.
    "approvals.api.inbox_revalidate.InboxRevalidateMiddleware",
    "csp.middleware.CSPMiddleware",
    # Serves collected static files (admin, API docs, the app's CSS) under gunicorn.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "approvals.web.middleware.TimeZoneMiddleware",
    # A signed-in member's GET acts for their organisation (row-level security).
    "approvals.http.middleware.TenantScopeMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "approvals.http.middleware.NoStoreMiddleware",
    # Last: turns a refused sign-in into approvals.http.lockout's answer.
    "axes.middleware.AxesMiddleware",
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "approvals.context_processors.navigation",
                "approvals.pages.absence.banner",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
# PostgreSQL everywhere. Production and CI name their server with DATABASE_URL; with DEBUG
# on and no DATABASE_URL, the development cluster that ``make run`` starts in .pgdata/
# (config/devdb.py) is used while it runs.

DATABASE_URL = env_str("DATABASE_URL", "") or ((devdb.url() or "") if DEBUG else "")
if not DATABASE_URL:
    raise ImproperlyConfigured(
        "DATABASE_URL must name a PostgreSQL server; in development `make run` (or "
        "`python -m config.devdb start`) starts one and DEBUG=true finds it"
    )
_db: dict[str, Any] = dict(dj_database_url.parse(DATABASE_URL))
if _db["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured(f"DATABASE_URL must name a PostgreSQL server, not {_db['ENGINE']}")
_db["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 60)
# A health check is a `SELECT 1` round trip before a request uses a kept connection;
# it spares the first request after a database restart an error. A connection that
# served a request within APPROVALS_DB_CHECK_AFTER_IDLE_MS is not checked (below).
_db["CONN_HEALTH_CHECKS"] = env_bool("DATABASE_CONN_HEALTH_CHECKS", True)
# Behind PgBouncer in transaction pooling a server-side cursor (what .iterator() opens)
# can lose its server between two fetches: DATABASE_DISABLE_SERVER_SIDE_CURSORS=true.
_db["DISABLE_SERVER_SIDE_CURSORS"] = env_bool("DATABASE_DISABLE_SERVER_SIDE_CURSORS", False)

DATABASES = {"default": _db}
# A streaming replica (a hot standby of DATABASE_URL's server) for the reads of committed
# history that tolerate seconds of lag: search, the audit export, analytics and
# verification (approvals.runtime.replica routes them). The inbox, the request page and
# every command stay on the primary. Unset: everything reads from the primary.
DATABASE_REPLICA_URL = env_str("DATABASE_REPLICA_URL", "")
if DATABASE_REPLICA_URL:
    _replica: dict[str, Any] = dict(dj_database_url.parse(DATABASE_REPLICA_URL))
    if _replica["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_REPLICA_URL must name a PostgreSQL server")
    _replica.update({k: _db[k] for k in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS")})
    _replica["DISABLE_SERVER_SIDE_CURSORS"] = _db["DISABLE_SERVER_SIDE_CURSORS"]
    # Tests read the replica as the primary's test database: it is a copy of it.
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASES["replica"] = _replica
DATABASE_ROUTERS = ["approvals.runtime.replica.ReplicaRouter"]
# Past this lag (seconds behind the primary, from pg_last_xact_replay_timestamp) the
# replica's reads go to the primary until it catches up; its lag is checked at most
# every APPROVALS_REPLICA_CHECK_SECONDS per process.
APPROVALS_REPLICA_MAX_LAG_SECONDS = env_int("APPROVALS_REPLICA_MAX_LAG_SECONDS", 30)
APPROVALS_REPLICA_CHECK_SECONDS = env_int("APPROVALS_REPLICA_CHECK_SECONDS", 5)
# ... but a connection is checked only once idle this long (milliseconds; see
# approvals.http.middleware.ConnectionCheckMiddleware): one that served a request a moment
# ago is not checked again before the next.
APPROVALS_DB_CHECK_AFTER_IDLE_MS = env_int("APPROVALS_DB_CHECK_AFTER_IDLE_MS", 1000)
# The command path's statements are prepared on the server once one has run this many
# times on a connection (approvals/runtime/store.py). "off": never (a pooler that
# cannot keep prepared statements, such as PgBouncer in transaction mode before 1.21).
APPROVALS_DB_PREPARE_THRESHOLD = env_int_or_off("APPROVALS_DB_PREPARE_THRESHOLD", 5)
# Row-level security (PostgreSQL; migration 0035, approvals/runtime/tenant_scope.py):
# commands and a signed-in member's page and API reads act as the role approvals_app
# for their tenant, so a query that forgets its tenant filter finds nothing. Off only
# where the database has no approvals_app role (docs/operations.md, "Row-level security").
APPROVALS_ROW_LEVEL_SECURITY = env_bool("APPROVALS_ROW_LEVEL_SECURITY", True)

# --- Authentication -------------------------------------------------------------------

AUTH_USER_MODEL = "approvals.User"
AUTHENTICATION_BACKENDS = [
    # First: refuses any sign-in of a locked-out account or address before checking it.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
# Every endpoint requires a signed-in user, so guardian needs no anonymous user row
# (creating one would also have to satisfy the custom user model's required fields).
ANONYMOUS_USER_NAME = None

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# How many reverse proxies of ours append to X-Forwarded-For in front of the app. 0: the
# client is REMOTE_ADDR and the header is ignored (see approvals/http/client_ip.py).
APPROVALS_TRUSTED_PROXY_COUNT = env_int("APPROVALS_TRUSTED_PROXY_COUNT", 0)

# Failed sign-ins (form, admin and POST /api/auth/token), counted per account and per
# client address: the limit-th failure locks both out for the cool-off.
AXES_FAILURE_LIMIT = env_int("APPROVALS_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = dt.timedelta(seconds=env_int("APPROVALS_LOGIN_COOLOFF_SECONDS", 15 * 60))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_CLIENT_IP_CALLABLE = "approvals.http.client_ip.client_ip"
AXES_LOCKOUT_CALLABLE = "approvals.http.lockout.lockout_response"
AXES_USERNAME_FORM_FIELD = "username"

# API tokens live this long unless issued with another lifetime (30 days).
APPROVALS_TOKEN_TTL_SECONDS = env_int("APPROVALS_TOKEN_TTL_SECONDS", 30 * 86400)

# /metrics answers a request bearing this token, or one from the loopback address.
APPROVALS_METRICS_TOKEN = env_str("APPROVALS_METRICS_TOKEN", "")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- API ------------------------------------------------------------------------------

_RENDERERS = ["rest_framework.renderers.JSONRenderer"]
if DEBUG:
    _RENDERERS.append("rest_framework.renderers.BrowsableAPIRenderer")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "approvals.api.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "approvals.api.errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": _RENDERERS,
    "DEFAULT_PARSER_CLASSES": ["approvals.api.parsers.LimitedJSONParser"],
    "DEFAULT_THROTTLE_RATES": {"auth": env_str("APPROVALS_AUTH_RATE", "30/minute")},
    # Throttles read the client address as approvals/http/client_ip.py does.
    "NUM_PROXIES": APPROVALS_TRUSTED_PROXY_COUNT,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Approvals API",
    "VERSION": "1.0.0",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "approvals.api.schema.add_error_responses",
    ],
}

# Request bodies past this size are refused before they reach a view.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("APPROVALS_MAX_BODY_BYTES", 256 * 1024)

# --- HTTPS and browser protections ----------------------------------------------------
# On whenever DEBUG is off; APPROVALS_HTTPS=false serves plain http (tests, benchmarks),
# and each setting can still be set on its own. Passes `manage.py check --deploy`.

_HTTPS = env_bool("APPROVALS_HTTPS", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", _HTTPS)
# Probes and scrapers inside the network may speak plain http.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", _HTTPS)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", _HTTPS)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 365 * 86400 if _HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
if APPROVALS_TRUSTED_PROXY_COUNT > 0:
    # Our proxy terminates TLS and says so; without a proxy the header is not trusted.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Everything from our own origin: no inline script or style, no CDN. The Swagger UI
# (/api/docs/) loads its init script from a URL for this (SpectacularSwaggerSplitView);
# its icons are data: images.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# --- Celery ---------------------------------------------------------------------------
# The outbox row, not the broker message, is the record of an activity attempt: late
# acks and reject-on-lost only make redelivery quicker; the sweeper covers the rest.

_BROKER_FROM_ENV = env_str("CELERY_BROKER_URL", "")
CELERY_BROKER_URL = _BROKER_FROM_ENV or "memory://"
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 270
CELERY_TASK_IGNORE_RESULT = True
# Redis redelivers a message not acked within the visibility timeout, so it must be longer
# than the longest activity (the time limit above). RabbitMQ has none: it redelivers an
# unacked message when the worker's channel closes, and closes a channel whose message
# stays unacked past the server's consumer_timeout (30 minutes by default, longer than the
# time limit); publishes there wait for the broker's confirm, so a message the broker did
# not take raises (the outbox keeps the attempt and the sweeper sends it again).
_AMQP_BROKER = CELERY_BROKER_URL.startswith(("amqp://", "amqps://", "pyamqp://"))
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = (
    {"confirm_publish": True} if _AMQP_BROKER else {"visibility_timeout": 3600}
)
# Queues and messages outlive a broker restart: Celery declares its queues durable (kombu's
# default) and sends messages persistent (said here). A worker that loses its broker
# connection cancels what it runs (redelivered; the attempt's claim keeps it to one
# outcome) and reconnects without end.
CELERY_TASK_DEFAULT_DELIVERY_MODE = "persistent"
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_DEFAULT_QUEUE = "default"
# Beat drives the periodic jobs: CELERY_BEAT_SCHEDULE below, built from their one list.
# --- Approvals ------------------------------------------------------------------------

APPROVALS_POLL_INTERVAL_SECONDS = env_int("APPROVALS_POLL_INTERVAL_SECONDS", 2)
APPROVALS_SWEEP_INTERVAL_SECONDS = env_int("APPROVALS_SWEEP_INTERVAL_SECONDS", 5)
APPROVALS_PRUNE_INTERVAL_SECONDS = env_int("APPROVALS_PRUNE_INTERVAL_SECONDS", 3600)
# How often the start schedules (admin: Start schedules) are checked for a due period.
APPROVALS_SCHEDULE_INTERVAL_SECONDS = env_int("APPROVALS_SCHEDULE_INTERVAL_SECONDS", 30)
# The workflow events' monthly partitions (PostgreSQL) are created this many months
# ahead, checked this often.
APPROVALS_HISTORY_MONTHS_AHEAD = env_int("APPROVALS_HISTORY_MONTHS_AHEAD", 3)
APPROVALS_HISTORY_PARTITIONS_INTERVAL_SECONDS = env_int(
    "APPROVALS_HISTORY_PARTITIONS_INTERVAL_SECONDS", 86400
)
# A decision sent from a page is held by the server this long, with an Undo, before it
# is recorded; held decisions whose window passed are released this often.
APPROVALS_UNDO_SECONDS = env_int("APPROVALS_UNDO_SECONDS", 8)
APPROVALS_HELD_INTERVAL_SECONDS = env_int("APPROVALS_HELD_INTERVAL_SECONDS", 1)
# Held decisions recorded, undone or refused are kept this many days, then pruned by
# the same job (the history keeps what was decided).
APPROVALS_HELD_KEEP_DAYS = env_int("APPROVALS_HELD_KEEP_DAYS", 30)
APPROVALS_TIMER_BATCH = env_int("APPROVALS_TIMER_BATCH", 200)
# Due timers of this many workflows fire in one transaction (1: each alone).
APPROVALS_TIMER_GROUP = env_int("APPROVALS_TIMER_GROUP", 20)
# Fired timer rows are deleted after this many days (the events keep the record).
APPROVALS_FIRED_TIMER_RETENTION_DAYS = env_int("APPROVALS_FIRED_TIMER_RETENTION_DAYS", 7)
# A task whose step has no deadline is still due: this long after it is assigned.
APPROVALS_DEFAULT_TASK_DUE_SECONDS = env_int("APPROVALS_DEFAULT_TASK_DUE_SECONDS", 3 * 86400)
# With no broker configured, run the timer poller and the activity runner in-process.
APPROVALS_EMBEDDED_WORKER = env_bool("APPROVALS_EMBEDDED_WORKER", not _BROKER_FROM_ENV)
# The key chain seals are signed with (HMAC-SHA256). Keep it out of the database and its
# backups: whoever holds both could forge a seal. Sealing refuses to run without it
# unless DEBUG is on (a fixed development key) or under tests.
APPROVALS_AUDIT_SEAL_KEY = env_str("APPROVALS_AUDIT_SEAL_KEY", "")
# Rows fetched per round trip by the audit export's server-side cursor.
APPROVALS_AUDIT_EXPORT_CHUNK = env_int("APPROVALS_AUDIT_EXPORT_CHUNK", 2000)

# --- Attachments ----------------------------------------------------------------------
# Files on a request (receipts, quotes) are kept through the storage alias "attachments",
# each once under its SHA-256. By default on the local disk under APPROVALS_FILES_ROOT;
# production may name another backend (an S3-compatible store through django-storages,
# whose own settings then come from the environment) with APPROVALS_FILES_BACKEND.
APPROVALS_FILES_ROOT = env_str("APPROVALS_FILES_ROOT", str(BASE_DIR / "files"))
APPROVALS_FILES_BACKEND = env_str(
    "APPROVALS_FILES_BACKEND", "django.core.files.storage.FileSystemStorage"
)
# The largest file accepted; an upload is cut off as it streams past this.
APPROVALS_FILE_MAX_BYTES = env_int("APPROVALS_FILE_MAX_BYTES", 10 * 1024 * 1024)
# How many files one request may hold, and how many one form or API call may bring.
APPROVALS_FILES_PER_REQUEST = env_int("APPROVALS_FILES_PER_REQUEST", 20)
APPROVALS_FILES_PER_UPLOAD = env_int("APPROVALS_FILES_PER_UPLOAD", 5)
# The types accepted, as sniffed from the content (a subset of the five known ones).
APPROVALS_FILE_TYPES = env_list(
    "APPROVALS_FILE_TYPES", "application/pdf,image/png,image/jpeg,image/webp,image/heic"
)
# An image larger than this (width x height) is refused: decoding it could take
# gigabytes (a "decompression bomb"). Previews are cut off after this many seconds.
APPROVALS_IMAGE_MAX_PIXELS = env_int("APPROVALS_IMAGE_MAX_PIXELS", 40_000_000)
APPROVALS_PREVIEW_TIMEOUT_SECONDS = env_int("APPROVALS_PREVIEW_TIMEOUT_SECONDS", 10)
# An image's preview is decoded in a child process whose address space may grow by this
# much (the decoders' working memory); past it, or past the timeout in CPU or wall time,
# the file simply has no preview.
APPROVALS_PREVIEW_MEMORY_BYTES = env_int("APPROVALS_PREVIEW_MEMORY_BYTES", 512 * 1024 * 1024)
# A draft's file in storage that no draft keeps is deleted once it is this old (a day:
# an upload still being written is never taken), by the job sweep-draft-files.
APPROVALS_DRAFT_FILES_GRACE_SECONDS = env_int("APPROVALS_DRAFT_FILES_GRACE_SECONDS", 86400)
# With APPROVALS_S3_BUCKET set, files go to that S3-compatible bucket (config/storage.py).
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "attachments": attachments_storage(os.environ, str(BASE_DIR / "files")),
    # Archived months of history (approvals.audit.archive): APPROVALS_ARCHIVE_ROOT, or an
    # S3-compatible bucket with APPROVALS_ARCHIVE_S3_BUCKET (config/storage.py).
    "archive": archive_storage(os.environ, str(BASE_DIR / "archive")),
}
# How many years a workflow's history is kept after it finishes, unless its
# organisation sets otherwise (approvals.audit.retention; RetentionPolicy).
APPROVALS_RETENTION_YEARS = env_int("APPROVALS_RETENTION_YEARS", 7)
# How many months after it finishes a workflow's history stays in the live database,
# unless its organisation sets otherwise; the job archive-history moves out the months
# past it (approvals.audit.retention). From 1 month to the retention.
APPROVALS_LIVE_MONTHS = env_int("APPROVALS_LIVE_MONTHS", 12)
if not 1 <= APPROVALS_LIVE_MONTHS <= APPROVALS_RETENTION_YEARS * 12:
    raise ImproperlyConfigured(
        f"APPROVALS_LIVE_MONTHS must be from 1 to the retention "
        f"({APPROVALS_RETENTION_YEARS * 12} months), got {APPROVALS_LIVE_MONTHS}"
    )
# On an S3-compatible archive store every object is written under Object Lock until its
# retention ends, in this mode: COMPLIANCE (nobody, root included, can delete it or
# shorten the lock) or GOVERNANCE (a user with s3:BypassGovernanceRetention can). The
# bucket must have Object Lock enabled.
APPROVALS_ARCHIVE_OBJECT_LOCK_MODE = env_str("APPROVALS_ARCHIVE_OBJECT_LOCK_MODE", "COMPLIANCE")
if APPROVALS_ARCHIVE_OBJECT_LOCK_MODE not in ("COMPLIANCE", "GOVERNANCE"):
    raise ImproperlyConfigured(
        "APPROVALS_ARCHIVE_OBJECT_LOCK_MODE must be COMPLIANCE or GOVERNANCE, got "
        f"{APPROVALS_ARCHIVE_OBJECT_LOCK_MODE!r}"
    )

# --- E-mail ---------------------------------------------------------------------------
# Mail is an outbox (approvals/notifications): rows written with the event, sent by the
# `approvals.send_mail` task after commit. `make run` prints mail on the console; the file
# backend (EMAIL_FILE_PATH) is how tests and reviewers read what a run sent.

EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30)
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(BASE_DIR / "sent-mail"))
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Approvals <approvals@localhost>")
# Links in mails start with this (scheme, host and port the people reach the app at).
APPROVALS_BASE_URL = env_str("APPROVALS_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
# One-click Approve / Reject links stop working after this long (7 days).
APPROVALS_LINK_MAX_AGE_SECONDS = env_int("APPROVALS_LINK_MAX_AGE_SECONDS", 7 * 86400)
# A failed send is retried after base * 2 ** (attempt - 1) seconds (capped at an hour),
# and given up after the last attempt (status failed, approvals_mail_failed_total).
APPROVALS_MAIL_RETRY_SECONDS = env_int("APPROVALS_MAIL_RETRY_SECONDS", 30)
APPROVALS_MAIL_MAX_ATTEMPTS = env_int("APPROVALS_MAIL_MAX_ATTEMPTS", 8)
# A sender holds the rows it claimed this long; a killed sender's rows come back after.
APPROVALS_MAIL_LEASE_SECONDS = env_int("APPROVALS_MAIL_LEASE_SECONDS", 120)
APPROVALS_MAIL_BATCH = env_int("APPROVALS_MAIL_BATCH", 50)
# Commands hand their mail rows to the broker from one thread per process, which waits
# this long after the first for others to join its message (milliseconds; 0: at once).
# A publish costs more Python than a decision's statements; a mail can wait 0.2 s.
APPROVALS_MAIL_HANDOVER_LINGER_MS = env_int("APPROVALS_MAIL_HANDOVER_LINGER_MS", 200)

# Beat runs the same periodic jobs as the embedded scheduler loop: one list,
# approvals/workers/jobs.py.
# Each job's interval is a setting of its own (see the list for names and defaults).
for _job in PERIODIC_JOBS:
    globals().setdefault(
        _job.interval_setting, env_int(_job.interval_setting, _job.default_seconds)
    )
CELERY_BEAT_SCHEDULE = beat_schedule(
    {job.interval_setting: globals()[job.interval_setting] for job in PERIODIC_JOBS}
)

# --- Internationalisation and time ----------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files ---------------------------------------------------------------------

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# In development static files are served straight from the apps; production runs
# collectstatic (the Procfile's release step).
WHITENOISE_USE_FINDERS = DEBUG

# --- Logging --------------------------------------------------------------------------

LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # A routing rule that fails is reported as a ConditionError with CEL's reason;
    # the library's own "Internal error" line for it would only repeat it.
    "loggers": {"celpy": {"level": "CRITICAL"}},
}
