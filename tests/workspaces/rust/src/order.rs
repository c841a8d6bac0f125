use crate::MAX_ITEMS; // ref: MAX_ITEMS

/// One line of an order.
#[derive(Debug, Clone)]
pub struct Item { // def: struct Item
    pub sku: String,
    pub price: u64,
    pub quantity: u64,
}

/// Anything with a total price.
pub trait Totaler { // def: trait Totaler
    fn total(&self) -> u64; // def: method Totaler.total
}

/// A customer's order.
#[derive(Debug)]
pub struct Order { // def: struct Order
    pub customer: String,
    pub items: Vec<Item>, // ref: Item
}

impl Order { // ref: Order
    /// Make an order, checking its size.
    pub fn create(customer: &str, items: Vec<Item>) -> Result<Order, String> { // def: method Order.create ref: Item Order
        if items.len() > MAX_ITEMS { // ref: MAX_ITEMS
            return Err("too many items for create_sales_order".to_string()); // noref: create_sales_order
        }
        Ok(Order { customer: customer.to_string(), items }) // ref: Order
    }
}

impl Totaler for Order { // ref: Totaler Order
    fn total(&self) -> u64 { // def: method Order.total
        self.items.iter().map(|i| i.price * i.quantity).sum()
    }
}
