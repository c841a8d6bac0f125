"""Reports: a free function that happens to be called total."""


def total(values: list[int]) -> int:  # def: function total
    """Sum of values (unrelated to Order.total)."""
    return sum(values)
