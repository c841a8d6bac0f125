"""Prices."""


def apply_discount(amount: float, percent: float) -> float:
    """The amount after a percentage discount."""
    return amount * (100 - percent) / 100
