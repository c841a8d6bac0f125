// Orders: a tiny workspace for navigation tests.
#pragma once

#include <string>
#include <vector>

namespace orders { // def: module orders

// The most items one order may hold.
constexpr int MAX_ITEMS = 50; // def: constant orders.MAX_ITEMS

// One line of an order.
struct Item { // def: struct orders.Item
    std::string sku;
    long price;
    long quantity;
};

// Anything with a total price.
class Totaler { // def: class orders.Totaler
public:
    virtual ~Totaler() = default;
    virtual long total() const = 0; // def: method orders.Totaler.total
};

// A customer's order.
class Order : public Totaler { // def: class orders.Order ref: Totaler
public:
    static Order create(const std::string &customer, std::vector<Item> items); // def: method orders.Order.create ref: Order Item
    long total() const override; // def: method orders.Order.total

private:
    Order(std::string customer, std::vector<Item> items); // ref: Item
    std::string customer_;
    std::vector<Item> items_; // ref: Item
};

Order createSalesOrder(const std::string &customer, std::vector<Item> items); // ref: Order createSalesOrder Item

}  // namespace orders
