package shop.orders

/** A priced thing. */
interface Priced { // def: interface Priced
    fun price(): Int // def: method Priced.price
}

data class Item(val name: String, val cents: Int) // def: class Item

/** A sales order. */
class Order(val items: List<Item>) : Priced { // def: class Order ref: Priced
    override fun price(): Int = items.sumOf { it.cents } // def: method Order.price ref: items

    companion object {
        const val MAX_ITEMS = 50
    }
}

enum class Status { OPEN, PAID } // def: enum Status

object Registry { // def: class Registry
    fun register(order: Order) {} // def: method Registry.register
}

typealias Orders = List<Order> // def: type Orders

/** Create a sales order for a customer. */
fun createSalesOrder(items: List<Item>): Order = Order(items) // def: function createSalesOrder noref: total
