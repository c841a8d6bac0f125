"""The orders package: a tiny workspace for navigation tests."""

from orders.models import MAX_ITEMS, Item, Order  # ref: MAX_ITEMS Item Order
from orders.service import create_sales_order  # ref: create_sales_order

__all__ = ["MAX_ITEMS", "Item", "Order", "create_sales_order"]
