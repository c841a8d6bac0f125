package shop.orders

/** A priced thing. */
trait Priced { // def: trait Priced
  def price: Int // def: method Priced.price
}

case class Item(name: String, cents: Int) // def: class Item

/** A sales order. */
class Order(val items: List[Item]) extends Priced { // def: class Order ref: Priced
  def price: Int = items.map(_.cents).sum // def: method Order.price ref: items
}

object Order { // def: class Order
  def create(items: List[Item]): Order = new Order(items) // def: method Order.create
}

object Orders {
  type Total = Int // def: type Orders.Total
  /** Create a sales order for a customer. */
  def createSalesOrder(items: List[Item]): Order = Order.create(items) // def: method Orders.createSalesOrder ref: create noref: total
}
