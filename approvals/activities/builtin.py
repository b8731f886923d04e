"""Activities the product ships, used by the demo workflow templates."""

from __future__ import annotations

import logging
from typing import Any

from ..notifications.format import money_format
from ..words.data import currency_of
from .registry import activity

log = logging.getLogger(__name__)


class BudgetExceeded(Exception):
    """Not retryable in the demo templates: asking again will not make room. Its
    message is written for the requester (``words.steps.READABLE_ERRORS``)."""


@activity("reserve_budget", queue="finance")
def reserve_budget(key: str, data: dict[str, Any]) -> dict[str, Any]:
    amount = int(data.get("amountPaise", 0))
    if amount > 1_000_000_000:
        shown = money_format(minor=amount, currency=currency_of(data, "currency"))
        raise BudgetExceeded(f"{shown} is more than the department's budget allows")
    log.info("reserved %s paise under %s", amount, key)
    return {"reservation": key, "amountPaise": amount}


@activity("release_budget", queue="finance")
def release_budget(key: str, data: dict[str, Any]) -> None:
    log.info("released the reservation of %s", key)


@activity("notify_erp")
def notify_erp(key: str, data: dict[str, Any]) -> None:
    log.info("notified the ERP of %s", key)


@activity("order_hardware", queue="it")
def order_hardware(key: str, data: dict[str, Any]) -> dict[str, Any]:
    log.info("ordered %s under %s", data.get("item", "hardware"), key)
    return {"order": key}


@activity("cancel_hardware_order", queue="it")
def cancel_hardware_order(key: str, data: dict[str, Any]) -> None:
    log.info("cancelled hardware order %s", key)
