"""A workflow template's roles as django-guardian object permissions: who may start it,
who may edit it, who may see every workflow of it. They are held on the template's
first version, so publishing a version keeps them.

The permissions are created here (Django would create them only after the whole
migrate), and the grants of ``view_workflowtemplate`` that superusers made on single
versions become ``view_workflowtemplate_runs`` on the first version of the same
template: whoever read a version's workflows now reads every version's, as the new
rule says. guardian's tables are shared (no tenant column, no row-level security); the
tenant is the template's, which the rules in approvals/access.py compare."""

from __future__ import annotations

from typing import Any

from django.db import migrations

ROLES = {
    "start_workflowtemplate": "May start workflows of this workflow template",
    "edit_workflowtemplate": "May edit this workflow template",
    "view_workflowtemplate_runs": "May see every workflow of this workflow template",
}
OLD_VIEW = "view_workflowtemplate"
NEW_VIEW = "view_workflowtemplate_runs"


def forwards(apps: Any, schema_editor: Any) -> None:
    alias = schema_editor.connection.alias
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Template = apps.get_model("approvals", "WorkflowTemplate")
    UserGrant = apps.get_model("guardian", "UserObjectPermission")
    GroupGrant = apps.get_model("guardian", "GroupObjectPermission")
    ct, _ = ContentType.objects.using(alias).get_or_create(
        app_label="approvals", model="workflowtemplate"
    )
    for codename, name in ROLES.items():
        Permission.objects.using(alias).get_or_create(
            content_type=ct, codename=codename, defaults={"name": name}
        )
    old = Permission.objects.using(alias).filter(content_type=ct, codename=OLD_VIEW).first()
    if old is None:
        return
    new = Permission.objects.using(alias).get(content_type=ct, codename=NEW_VIEW)
    first_of: dict[str, str | None] = {}

    def first(object_pk: str) -> str | None:
        if object_pk not in first_of:
            version = Template.objects.using(alias).filter(pk=object_pk).first()
            found = (
                Template.objects.using(alias)
                .filter(tenant_id=version.tenant_id, key=version.key)
                .order_by("version")
                .first()
                if version is not None
                else None
            )
            first_of[object_pk] = str(found.pk) if found is not None else None
        return first_of[object_pk]

    for model, holder in ((UserGrant, "user_id"), (GroupGrant, "group_id")):
        for grant in model.objects.using(alias).filter(content_type=ct, permission=old):
            target = first(grant.object_pk)
            if target is not None:
                model.objects.using(alias).get_or_create(
                    content_type=ct,
                    permission=new,
                    object_pk=target,
                    **{holder: getattr(grant, holder)},
                )
            grant.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0127_tenant_statistics_of_new_tables"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("guardian", "0003_remove_groupobjectpermission_guardian_gr_content_ae6aec_idx_and_more"),
    ]
    operations = [
        migrations.AlterModelOptions(
            name="workflowtemplate",
            options={
                "ordering": ["tenant", "key", "-version"],
                "permissions": [
                    ("start_workflowtemplate", "May start workflows of this workflow template"),
                    ("edit_workflowtemplate", "May edit this workflow template"),
                    (
                        "view_workflowtemplate_runs",
                        "May see every workflow of this workflow template",
                    ),
                ],
            },
        ),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
