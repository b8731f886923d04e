"""The inbox's summary line and amount, projected onto the workflow row, and filled for
the workflows that ran before them.

The line and the amount are computed by this migration's own copy of the command path's
code (``approvals.data_words`` and ``notifications.format``, as they stood when the copy
was made): a migration imports no code of the app, so a later change to how the app
words a line cannot change what this migration writes. The workflow template's title,
summary and schema are read from its stored definition as the engine's parser reads
them; a definition that is not a JSON object gets the default line (its title and the
subject's reference) and no amount."""

import datetime as dt
import re
import string

from django.db import migrations, models

BATCH = 500

SYMBOLS = {"INR": "₹", "USD": "$", "EUR": "€", "GBP": "£"}
INDIAN_GROUPING = frozenset({"INR"})  # lakhs and crores: 1,00,000
EXPONENTS = {"JPY": 0, "KRW": 0, "BHD": 3, "KWD": 3, "OMR": 3}
DEFAULT_CURRENCY = "INR"
SUMMARY_MAX = 200
ELLIPSIS = "…"
_LOOSE_ENDS = " \t,;:·-–—/|"
_SPACES = re.compile(r"\s{2,}")
_BREAKS = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]+")


def _group(digits, indian):
    if len(digits) <= 3:
        return digits
    head, tail = digits[:-3], digits[-3:]
    size = 2 if indian else 3
    parts = []
    while head:
        parts.insert(0, head[-size:])
        head = head[:-size]
    return ",".join([*parts, tail])


def money_format(*, minor, currency):
    currency = (currency or "").upper()
    exponent = EXPONENTS.get(currency, 2)
    sign = "-" if minor < 0 else ""
    whole, fraction = divmod(abs(int(minor)), 10**exponent)
    figure = _group(str(whole), indian=currency in INDIAN_GROUPING)
    if exponent:
        figure += "." + str(fraction).rjust(exponent, "0")
    symbol = SYMBOLS.get(currency, currency)
    if not symbol:
        return f"{sign}{figure}"
    spacer = " " if symbol.isalpha() else ""
    return f"{sign}{symbol}{spacer}{figure}"


def one_line(text):
    return _BREAKS.sub(" ", text).strip()


def code_words(value):
    if not ("_" in value or (value.isupper() and len(value) > 3)):
        return value
    words = [w for w in value.split("_") if w]
    out = [w if len(w) <= 2 and w.isupper() else w.lower() for w in words]
    if out and out[0].islower():
        out[0] = out[0].capitalize()
    return " ".join(out)


def money_fields(schema):
    out = {}
    for name, spec in ((schema or {}).get("properties") or {}).items():
        money = spec.get("x-money") if isinstance(spec, dict) else None
        if isinstance(money, dict):
            currency = money.get("currency")
            out[name] = currency if isinstance(currency, str) else ""
        elif money is True:
            out[name] = ""
    return out


def currency_of(data, currency_field):
    value = data.get(currency_field) if currency_field else None
    return value if isinstance(value, str) and value else DEFAULT_CURRENCY


def format_value(schema, data, name):
    value = data.get(name)
    money = money_fields(schema)
    if name in money and isinstance(value, int) and not isinstance(value, bool):
        return money_format(minor=value, currency=currency_of(data, money[name]))
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if value is None:
        return ""
    spec = ((schema or {}).get("properties") or {}).get(name)
    if isinstance(spec, dict) and "enum" in spec and isinstance(value, str):
        return code_words(value)
    if isinstance(value, str) and isinstance(spec, dict) and spec.get("format") == "date":
        try:
            parsed = dt.date.fromisoformat(value)
        except ValueError:
            return value
        return f"{parsed.day} {parsed:%b %Y}"
    return str(value)


def summary_fields(line):
    return [name for _, name, _, _ in string.Formatter().parse(line) if name is not None]


def summary_line(*, title, summary, schema, subject_id, data):
    line = ""
    if summary:
        try:
            line = summary.format_map(
                {n: one_line(format_value(schema, data, n)) for n in summary_fields(summary)}
            )
        except (KeyError, IndexError, ValueError, AttributeError):
            line = ""
        line = _SPACES.sub(" ", one_line(line)).strip(_LOOSE_ENDS)
    if not line:
        line = one_line(f"{title} {subject_id}".strip())
    if len(line) > SUMMARY_MAX:
        line = line[: SUMMARY_MAX - 1].rstrip() + ELLIPSIS
    return line


def amount_line(schema, data):
    for name in money_fields(schema):
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return format_value(schema, data, name)
    return ""


def fill_summaries(apps, schema_editor):
    """Each workflow's summary and amount, computed as the command path computes them:
    from its data under its pinned workflow template version."""
    Workflow = apps.get_model("approvals", "Workflow")
    WorkflowTemplate = apps.get_model("approvals", "WorkflowTemplate")
    definitions = {}

    def summarise(wf):
        if wf.template_id not in definitions:
            template = WorkflowTemplate.objects.get(pk=wf.template_id)
            doc = template.definition
            if isinstance(doc, dict):
                title = doc.get("title", doc.get("key"))
                schema = doc.get("schema")
                summary = doc.get("summary")
                definitions[wf.template_id] = (
                    title if isinstance(title, str) else template.title or template.key,
                    summary if isinstance(summary, str) else None,
                    schema if isinstance(schema, dict) else None,
                )
            else:
                definitions[wf.template_id] = (template.title or template.key, None, None)
        title, summary, schema = definitions[wf.template_id]
        data = wf.data if isinstance(wf.data, dict) else {}
        line = summary_line(
            title=title, summary=summary, schema=schema, subject_id=wf.subject_id, data=data
        )
        return line, amount_line(schema, data)

    batch = []
    for wf in Workflow.objects.only("id", "template_id", "subject_id", "data").iterator(
        chunk_size=BATCH
    ):
        wf.summary, wf.amount_display = summarise(wf)
        batch.append(wf)
        if len(batch) >= BATCH:
            Workflow.objects.bulk_update(batch, ["summary", "amount_display"])
            batch = []
    if batch:
        Workflow.objects.bulk_update(batch, ["summary", "amount_display"])


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0022_drafts"),
    ]

    operations = [
        migrations.AddField(
            model_name="workflow",
            name="summary",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddField(
            model_name="workflow",
            name="amount_display",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(fill_summaries, migrations.RunPython.noop),
    ]
