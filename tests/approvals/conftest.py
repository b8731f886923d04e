"""Fixtures every approvals test may ask for by name."""

from .files import files_root  # noqa: F401  (the attachments storage in a fresh folder)
