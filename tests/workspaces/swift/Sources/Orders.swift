/// A priced thing.
protocol Priced { // def: interface Priced
    func price() -> Int // def: method Priced.price
}

struct Item { // def: struct Item
    let name: String
    let cents: Int
}

/// A sales order.
class Order: Priced { // def: class Order ref: Priced
    let items: [Item]

    init(items: [Item]) { self.items = items }

    func `default`() -> Int { 0 } // def: method Order.default

    func price() -> Int { // def: method Order.price
        return items.reduce(0) { $0 + $1.cents } // ref: items
    }
}

enum Status { case open, paid } // def: enum Status

typealias Orders = [Order] // def: type Orders

/// Create a sales order for a customer.
func createSalesOrder(items: [Item]) -> Order { // def: function createSalesOrder
    return Order(items: items) // noref: total
}

extension Order {
    func describe() -> String { // def: method Order.describe
        return "order"
    }
}
