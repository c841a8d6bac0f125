"""Checkout."""

from shop.pricing import apply_discount


def checkout(amount: float) -> float:
    return apply_discount(amount, 10)
