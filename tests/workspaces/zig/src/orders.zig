const std = @import("std");

/// A line of an order.
pub const Item = struct { // def: struct Item
    name: []const u8,
    price: u32,
};

pub const Status = enum { open, paid }; // def: enum Status

pub const OrderError = error{ Empty, TooLarge }; // def: type OrderError

/// A sales order.
pub const Order = struct { // def: struct Order
    items: []const Item,
    status: Status = .open,

    /// The order's total in cents.
    pub fn total(self: Order) u32 { // def: method Order.total
        var sum: u32 = 0;
        for (self.items) |item| sum += item.price; // ref: item price
        return sum;
    }
};

/// Create a sales order for a customer.
pub fn createSalesOrder(items: []const Item) OrderError!Order { // def: function createSalesOrder ref: Item Order
    if (items.len == 0) return error.Empty;
    return Order{ .items = items }; // noref: createSalesOrder is not called here
}

test "total adds prices" {
    const order = Order{ .items = &.{} };
    try std.testing.expectEqual(@as(u32, 0), order.total());
}
