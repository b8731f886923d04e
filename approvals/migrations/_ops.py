"""Operations the migrations share (a name Django's migration loader skips)."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def postgres_sql(sql: str, reverse_sql: str) -> migrations.RunPython:
    """SQL that runs on PostgreSQL only. For changes whose reason is a PostgreSQL cost
    (a lock, an index written on every insert): SQLite keeps its schema as it is, and
    is not made to rebuild a table (which would drop the table's triggers)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    def backwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(reverse_sql)

    return migrations.RunPython(forwards, backwards)


def drop_foreign_key(table: str, name: str, column: str, target: str) -> migrations.RunPython:
    """Drop the foreign-key constraint ``name`` of ``table.column`` (to ``target``'s id)."""
    return postgres_sql(
        f'ALTER TABLE "{table}" DROP CONSTRAINT IF EXISTS "{name}"',
        f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" FOREIGN KEY ("{column}")'
        f' REFERENCES "{target}" ("id") DEFERRABLE INITIALLY DEFERRED',
    )
