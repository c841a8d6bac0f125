"""Creating orders."""

from orders.models import Item, Order  # ref: Item Order


def create_sales_order(customer: str, items: list[Item]) -> Order:  # def: function create_sales_order ref: Item Order
    """Create a sales order for a customer."""
    return Order.create(customer, items)  # ref: Order create
