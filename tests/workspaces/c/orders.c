#include "orders.h"

/* Make an order, checking its size. */
int order_create(Order *out, const char *customer, const Item *items, size_t count) { // def: function order_create ref: Order Item
    if (count > MAX_ITEMS) { // ref: MAX_ITEMS
        return -1; /* too many items for create_sales_order  noref: create_sales_order */
    }
    out->customer = customer;
    out->count = count;
    for (size_t i = 0; i < count; i++) {
        out->items[i] = items[i];
    }
    return 0;
}

/* The order's total in cents. */
long order_total(const Order *order) { // def: function order_total ref: Order
    long sum = 0;
    for (size_t i = 0; i < order->count; i++) {
        sum += order->items[i].price * order->items[i].quantity;
    }
    return sum;
}

/* Create a sales order for a customer. */
int create_sales_order(Order *out, const char *customer, const Item *items, size_t count) { // def: function create_sales_order ref: Order Item
    return order_create(out, customer, items, count); // ref: order_create
}
