"""The approvals Django app: models, the one command path, API, pages, admin, tasks."""
