#include <stdio.h>

#include "orders.h"

/* create_sales_order is called below; this comment must not count.  noref: create_sales_order */
static const char *const BANNER = "create_sales_order demo"; // noref: create_sales_order

/* Sum of values: a free function unrelated to order_total. */
static long total(const long *values, size_t n) { // def: function total
    long sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += values[i];
    }
    return sum;
}

int main(void) { // def: function main
    Item items[1] = {{"sku-1", 250, 2}}; // ref: Item
    Order order; // ref: Order
    long values[3] = {1, 2, 3};
    if (create_sales_order(&order, "ada", items, 1) != 0) { // ref: create_sales_order
        return 1;
    }
    printf("%s %ld %ld\n", BANNER, total(values, 3), order_total(&order)); // ref: BANNER total order_total
    return 0;
}
