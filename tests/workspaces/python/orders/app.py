"""Entry point that places an order."""

from orders.models import Item  # ref: Item
from orders.reports import total  # ref: total
from orders.service import create_sales_order  # ref: create_sales_order

# create_sales_order is called below; this comment must not count.  noref: create_sales_order
BANNER = "create_sales_order demo"  # def: constant BANNER noref: create_sales_order


def main() -> int:  # def: function main
    order = create_sales_order("ada", [Item("sku-1", 250, 2)])  # ref: create_sales_order Item
    print(BANNER, total([1, 2, 3]))  # ref: BANNER total
    return order.total()  # ref: total


if __name__ == "__main__":
    main()  # ref: main
