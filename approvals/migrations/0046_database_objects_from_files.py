"""The database's functions, triggers and row-level security applied from their files in
approvals/sql/, the one place to read them (approvals/sql/README.md).

Until here each object was written into the migration that created or changed it; those
migrations keep their own text (they are history). This one re-applies the current
files: every function with CREATE OR REPLACE, every trigger and policy dropped if it
exists and created again, so on a database migrated so far it changes nothing, and
running it twice changes nothing either. The policies and grants are applied only where
the roles of migration 0035 exist (where they do not, 0035 skipped them with a notice).

The files are read from disk, relative to this file, when the migration runs (it needs
nothing of the app), and each is applied only while its statements are the ones this
migration knew (``SQL_FILES``: the SHA-256 of the file after its leading comment lines).
A file changed since is left to the later migration that records its new digest and
applies it, so this migration does on any database what it did when it was written,
and never runs a definition that needs a table or column added after it.

Triggers and policies are dropped and created inside this migration's transaction: each
table is locked for that moment (no rewrite, no scan)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from django.db import migrations

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
ROLES = ("approvals_app", "approvals_system")

# The files this migration applies, in this order, with their statements' digests.
SQL_FILES = {
    "functions/approvals_add_arrays.sql": "d7eba234bdea521cfd2dd643e4d1b193c8e642b93fc88cf91b1c1890f3fb2081",
    "functions/approvals_bump.sql": "ac533095780241751e6d2b8d1b0eab841bbb1979bc04db87aa742ef31b1ccd6d",
    "functions/approvals_directory_changed.sql": "d488fddb3a4662302ef151f17693a5eb55e63904e7224c4284aa5f55329162a5",
    "functions/approvals_histogram.sql": "64c46e2ff50e021d06c034cf08f3fcc1fdad8e54548afd4926d120509f7d2cfb",
    "functions/approvals_histogram_add.sql": "789a1c54a3d546811195d78b4d3460c073d6e0ca8850490f85c460e3717f07a3",
    "functions/approvals_inbox_all_changed.sql": "35c2008a342a74fa15d1ed1bcc6d6bae2d68c57d79ff0cf5b17218f85cad94ac",
    "functions/approvals_inbox_delegations_changed.sql": "eb4cf24f1084dcd56d5ebe71e20a6d0351ac587204f2d6277ff0b239e49b6461",
    "functions/approvals_inbox_delegations_new.sql": "9a36e86faf52e5c12af0ba28e7e18cef891e4ffaebe5ca6c0016f63ed93e7767",
    "functions/approvals_inbox_delegations_old.sql": "5f43911fdf4e2fb44ca95dce715b8e3bb6b6d3bed5a3022510f70026da730de8",
    "functions/approvals_inbox_flush.sql": "27ac052449973b4630105523906068a13d5874a1ba63a01a7d4f6763dd967a28",
    "functions/approvals_inbox_flush_now.sql": "48a528cfb1ee5478d6274d59bbefdada0e831869d94bcb59ada003ac6f8a16b8",
    "functions/approvals_inbox_note.sql": "81706c8b50ee85d1dff68c9466d1bd67ce1efdebcd93ace016a93eed2c248a3b",
    "functions/approvals_inbox_note_counts.sql": "84d4ded14d830d26c0c0e920eac5fd1e852ced5a07977340c22b6492b1544445",
    "functions/approvals_inbox_recount.sql": "04d3a0e217786409a355fbb4a104bc76528a625ef4dd0b302053d6209857a6c2",
    "functions/approvals_inbox_tasks_changed.sql": "b807780619967ee81b86a188282605d7565d1e328ec6943b6503e22ecaea817e",
    "functions/approvals_inbox_tasks_new.sql": "82096a537c29d19789bba24b3beaa42b80fb90149a48400548eb79e06c332630",
    "functions/approvals_inbox_tasks_old.sql": "e0eee13e86ee3915a9ce45b195b8cae77af2bea45ec5fc8af9deeb5872ea6a02",
    "functions/approvals_inbox_workflow_words.sql": "519c45a547987072ee3e8e44d03685b83f32e9e67d3b88761d43c5afb5525d3a",
    "functions/approvals_people_named.sql": "25243362c129a8d76b21411471567658d8a1d377643bc9628488f9ed44652782",
    "functions/approvals_refuse_event_change.sql": "d99d591a60cc269131879a5ba2b13a1298fbd4e7c5d5842fb203fb6a2a76cd67",
    "functions/approvals_refuse_hold_change.sql": "9097e6500842f38ebffcc6f6faf38bc7a6e4cc975e0765d8a9c9fd430c0d411b",
    "functions/approvals_refuse_override_change.sql": "6ef3aadc285879badd459f6ae28748310826f211085878e9b5a59ed8a26d9efb",
    "functions/approvals_refuse_seal_change.sql": "bc6225cd21de3c8301fbe774153575da12950fc36eba8409850d015828772841",
    "functions/approvals_search_ids.sql": "d59c0d712f80cee115abfe8549dd4225fc88a1a6b7b8982843d26489cd317745",
    "functions/approvals_stepday_add.sql": "9b9f5b2ee8f75e209b65a9cac911323997f8eb1588298f9a5fb447ff9af03f08",
    "functions/approvals_stepday_delete.sql": "15b9e4ef0319e8ea32b1c1b1650c1d845963e045e3a2b00ec2bcf341fea79107",
    "functions/approvals_stepday_insert.sql": "734a92bf12bd21c01a6f7f6c6e91cdb66a16eb3c129a0e74559edc19787a7476",
    "functions/approvals_stepday_move.sql": "c7d4c61eb0a995bc8c4324a6c93d54c6ef2e4ab924856f0d754dd3e87c280c74",
    "functions/approvals_stepday_one.sql": "05ce9c7236df84c42f45f0d50d4fd9dd47a105f1fc6808391237637e520a38b9",
    "functions/approvals_stepday_update.sql": "0ce804c63bd4abd26e9427fbe66519324051d6192d3f253e30fcad25b43c6e5b",
    "functions/approvals_wait_bucket.sql": "612d7a1221d1df6a6c06ea0f20af154f6d08fbf553abbb2df15200e04aecdda1",
    "triggers/analytics_rollup.sql": "d13d4b0faac4b5fdbf9b0cf0c6e650f7779c74ab88192f242b3c78abb706daa8",
    "triggers/append_only.sql": "ac9a91af3eb68ba74c856bf21176c28713c454e9e9d22a648f348f41d6f46b33",
    "triggers/directory_version.sql": "1e056b83a9a11c10f63b8bc2a65f20ea8cae9db9ed004d24b734cb0835ccc868",
    "triggers/inbox_version.sql": "a012cb44f119a5784691d4a0de024ff9b48f6af8d817e7eb9d9de4ea9b45ffdd",
    "policies/grants.sql": "63273d60c28748742e5c70ebb0625ff9d810d3f123911167e4f8ee62b3c05d7d",
    "policies/tenant_isolation.sql": "055ddb4e401dc0866b811af66f82750ad62544464cbe822674fa7c03918d47ff",
}


def statements_digest(text: str) -> str:
    """The SHA-256 of a file's text after its leading comment lines."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("--"):
        start += 1
    return hashlib.sha256("".join(lines[start:]).encode()).hexdigest()


def _apply(schema_editor: Any, folder: str) -> None:
    for name, digest in SQL_FILES.items():
        path = SQL_DIR / name
        if not name.startswith(folder + "/") or not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        if statements_digest(text) == digest:
            schema_editor.execute(text, None)


def forwards(apps: Any, schema_editor: Any) -> None:
    _apply(schema_editor, "functions")
    _apply(schema_editor, "triggers")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_roles WHERE rolname = ANY(%s)", [list(ROLES)])
        roles = cursor.fetchone()[0]
    if roles != len(ROLES):
        sys.stderr.write(
            "Migration 0046: row-level security's policies not applied: the roles"
            " approvals_app and approvals_system do not exist (see migration 0035).\n"
        )
        return
    _apply(schema_editor, "policies")
    # The events' partitions are read through their parent's policy only (as after every
    # migrate): the grant on all tables above reached them too.
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND c.relispartition"
            " AND c.relkind IN ('r', 'p')"
            " AND has_table_privilege('approvals_app', c.oid, 'SELECT')"
        )
        partitions = [row[0] for row in cursor.fetchall()]
    for partition in partitions:
        schema_editor.execute(f'REVOKE ALL ON "{partition}" FROM approvals_app', None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0045_event_policy_estimate"),
        ("notifications", "0005_comment_mails"),
    ]
    # Backwards, the objects stay as they are: the migrations that created them drop them.
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
