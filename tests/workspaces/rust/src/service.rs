use crate::order::{Item, Order}; // ref: Item Order

/// Create a sales order for a customer.
pub fn create_sales_order(customer: &str, items: Vec<Item>) -> Result<Order, String> { // def: function create_sales_order ref: Item Order
    Order::create(customer, items) // ref: Order create
}
