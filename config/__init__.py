"""Project configuration: settings, URLs, WSGI/ASGI entry points and the Celery app."""

# Imported here so that `shared_task` binds to this app whenever Django starts.
from .celery import app as celery_app

__all__ = ["celery_app"]
