"""An organisation's exchange rates: what one unit of a currency is worth in the
organisation's base currency (``Tenant.base_currency``) on a date. Finance admins keep
them in the admin; a start records the rate it used in its event
(approvals.services.rates, templates_engine.money)."""

from __future__ import annotations

from django.core.validators import MinValueValidator, RegexValidator
from django.db import models

from .directory import Tenant

CURRENCY_CODE = RegexValidator(
    r"^[A-Z]{3}$", "A currency is its three-letter ISO 4217 code in capitals, such as USD."
)


class ExchangeRate(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE)
    base = models.CharField(
        max_length=3,
        validators=[CURRENCY_CODE],
        help_text="The organisation's base currency the rate converts to (INR).",
    )
    currency = models.CharField(
        max_length=3, validators=[CURRENCY_CODE], help_text="The currency converted (USD)."
    )
    on = models.DateField("date", help_text="The day the rate is for.")
    rate = models.DecimalField(
        max_digits=18,
        decimal_places=8,
        validators=[MinValueValidator(0)],
        help_text="Units of the base currency one unit of the currency is worth (83.20).",
    )

    class Meta:
        ordering = ["-on", "currency"]
        constraints = [
            # also the index a start's look-up reads: newest rate on or before a day
            models.UniqueConstraint(
                fields=["tenant", "base", "currency", "on"], name="exchange_rate_one_a_day"
            ),
            models.CheckConstraint(condition=models.Q(rate__gt=0), name="exchange_rate_positive"),
            models.CheckConstraint(
                condition=~models.Q(base=models.F("currency")), name="exchange_rate_two_currencies"
            ),
        ]

    def __str__(self) -> str:
        return f"1 {self.currency} = {self.rate.normalize():f} {self.base} on {self.on:%d %b %Y}"
