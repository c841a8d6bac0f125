//! A tiny workspace for navigation tests.

pub mod order; // def: module order
pub mod report; // def: module report
pub mod service; // def: module service
pub mod kinds; // def: module kinds

/// The most items one order may hold.
pub const MAX_ITEMS: usize = 50; // def: constant MAX_ITEMS
