use orders::order::{Item, Totaler}; // ref: Item Totaler
use orders::report::total; // ref: total
use orders::service::create_sales_order; // ref: create_sales_order

// create_sales_order is called below; this comment must not count.  noref: create_sales_order
const BANNER: &str = "create_sales_order demo"; // def: constant BANNER noref: create_sales_order

fn main() { // def: function main
    let item = Item { sku: "sku-1".to_string(), price: 250, quantity: 2 }; // ref: Item
    let order = create_sales_order("ada", vec![item]).expect("valid order"); // ref: create_sales_order
    println!("{} {} {}", BANNER, total(&[1, 2, 3]), order.total()); // ref: BANNER total
}
