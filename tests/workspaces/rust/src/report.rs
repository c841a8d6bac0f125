/// Sum of values (a free function unrelated to `Order::total`).
pub fn total(values: &[u64]) -> u64 { // def: function total
    values.iter().sum()
}
