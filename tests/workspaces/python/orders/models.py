"""Order and its parts."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

MAX_ITEMS = 50  # def: constant MAX_ITEMS


@dataclass(frozen=True)
class Item:  # def: class Item
    """One line of an order."""

    sku: str
    price: int
    quantity: int = 1


class Priced(ABC):  # def: class Priced
    """Anything with a total price."""

    @abstractmethod
    def total(self) -> int:  # def: method Priced.total
        """Return the total in cents."""


class Order(Priced):  # def: class Order ref: Priced
    """A customer's order."""

    def __init__(self, customer: str, items: list[Item]) -> None:  # def: method Order.__init__ ref: Item
        self.customer = customer
        self.items = items

    @classmethod
    def create(cls, customer: str, items: list[Item]) -> Order:  # def: method Order.create ref: Item Order
        if len(items) > MAX_ITEMS:  # ref: MAX_ITEMS
            raise ValueError("too many items for create_sales_order")  # noref: create_sales_order
        return cls(customer, items)

    def total(self) -> int:  # def: method Order.total
        return sum(item.price * item.quantity for item in self.items)

    class Status:  # def: class Order.Status
        """Where the order is in its life."""

        def label(self) -> str:  # def: method Order.Status.label
            return "open"


@dataclass
class Basket:  # def: class Basket
    items: list[Item] = field(default_factory=list)  # ref: Item
