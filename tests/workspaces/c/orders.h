/* Orders: a tiny workspace for navigation tests. */
#ifndef ORDERS_H
#define ORDERS_H

#include <stddef.h>

/* The most items one order may hold. */
#define MAX_ITEMS 50 // def: constant MAX_ITEMS

/* One line of an order. */
typedef struct Item { // def: struct Item
    const char *sku;
    long price;
    long quantity;
} Item;

/* A customer's order. */
typedef struct Order { // def: struct Order
    const char *customer;
    Item items[MAX_ITEMS]; // ref: Item MAX_ITEMS
    size_t count;
} Order;

int order_create(Order *out, const char *customer, const Item *items, size_t count); // ref: order_create Order Item
long order_total(const Order *order); // ref: order_total Order
int create_sales_order(Order *out, const char *customer, const Item *items, size_t count); // ref: create_sales_order Order Item

#endif
