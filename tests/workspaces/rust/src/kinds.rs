//! Definition kinds the syntax layer extracts from Rust: one annotated case per construct.

use std::fmt;

/// A price in cents: named fields are fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Money { // def: struct Money
    pub cents: u64, // def: field Money.cents
    currency: &'static str, // def: field Money.currency
}

/// A tuple struct: its fields have no names.
pub struct Sku(pub String); // def: struct Sku

/// Variants are the enum's constants; a struct-like variant has fields.
pub enum Status { // def: enum Status
    Open, // def: constant Status.Open
    Paid { at: u64 }, // def: constant Status.Paid def: field Status.Paid.at
    Refunded(u64), // def: constant Status.Refunded
}

#[repr(C)]
pub union Bits { // def: struct Bits
    pub int: u32, // def: field Bits.int
    pub float: f32, // def: field Bits.float
}

/// A trait with an associated const and type, and a default method.
pub trait Priced { // def: trait Priced
    const CURRENCY: &'static str; // def: constant Priced.CURRENCY
    type Amount; // def: type Priced.Amount
    fn amount(&self) -> Self::Amount; // def: method Priced.amount ref: Amount
    fn describe(&self) -> String { // def: method Priced.describe
        format!("price in {}", Self::CURRENCY) // ref: CURRENCY noref: describe
    }
}

impl Money { // ref: Money
    pub const ZERO: Money = Money { cents: 0, currency: "EUR" }; // def: constant Money.ZERO

    pub fn new(cents: u64) -> Self { // def: method Money.new
        Money { cents, currency: DEFAULT_CURRENCY } // ref: cents DEFAULT_CURRENCY
    }
}

impl Priced for Money { // ref: Priced Money
    const CURRENCY: &'static str = "EUR"; // def: constant Money.CURRENCY
    type Amount = u64; // def: type Money.Amount

    fn amount(&self) -> u64 { // def: method Money.amount
        self.cents
    }
}

/// An impl for a reference names the type behind it.
impl fmt::Display for &Money { // ref: Money
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { // def: method Money.fmt
        write!(f, "{} {}", self.cents, self.currency)
    }
}

/// An impl for a primitive type names it.
impl Priced for u32 {
    const CURRENCY: &'static str = "XXX"; // def: constant u32.CURRENCY
    type Amount = u32; // def: type u32.Amount

    fn amount(&self) -> u32 { // def: method u32.amount
        *self
    }
}

pub type Cents = u64; // def: type Cents
pub const MAX_LINES: usize = 100; // def: constant MAX_LINES
pub static DEFAULT_CURRENCY: &str = "EUR"; // def: constant DEFAULT_CURRENCY

pub mod rounding { // def: module rounding
    pub fn round(cents: u64) -> u64 { // def: function rounding.round
        fn half(x: u64) -> u64 { // def: function rounding.round.half
            x / 2
        }
        let doubled = half(cents) * 2; // ref: half
        doubled + cents % 2
    }
}

macro_rules! cents { // def: function cents
    ($x:expr) => {
        $x * 100
    };
}

pub fn dollars_to_cents(x: u64) -> u64 { // def: function dollars_to_cents
    cents!(x)
}

pub fn r#match(x: u64) -> bool { // def: function match
    x > 0
}
