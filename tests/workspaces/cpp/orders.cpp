#include "orders.hpp"

#include <stdexcept>
#include <utility>

namespace orders { // def: module orders

Order::Order(std::string customer, std::vector<Item> items) // ref: Order Item
    : customer_(std::move(customer)), items_(std::move(items)) {}

// Make an order, checking its size.
Order Order::create(const std::string &customer, std::vector<Item> items) { // def: method orders.Order.create ref: Order Item
    if (items.size() > static_cast<std::size_t>(MAX_ITEMS)) { // ref: MAX_ITEMS
        throw std::invalid_argument("too many items for createSalesOrder"); // noref: createSalesOrder
    }
    return Order(customer, std::move(items)); // ref: Order
}

long Order::total() const { // def: method orders.Order.total ref: Order
    long sum = 0;
    for (const auto &item : items_) {
        sum += item.price * item.quantity;
    }
    return sum;
}

// Create a sales order for a customer.
Order createSalesOrder(const std::string &customer, std::vector<Item> items) { // def: function orders.createSalesOrder ref: Order Item
    return Order::create(customer, std::move(items)); // ref: Order create
}

}  // namespace orders
