#include <iostream>
#include <vector>

#include "orders.hpp"

namespace report { // def: module report

// Sum of values: a free function unrelated to Order::total.
long total(const std::vector<long> &values) { // def: function report.total
    long sum = 0;
    for (long v : values) {
        sum += v;
    }
    return sum;
}

}  // namespace report

// createSalesOrder is called below; this comment must not count.  noref: createSalesOrder
static const char *const BANNER = "createSalesOrder demo"; // noref: createSalesOrder

int main() { // def: function main
    auto order = orders::createSalesOrder("ada", {orders::Item{"sku-1", 250, 2}}); // ref: createSalesOrder Item
    std::cout << BANNER << " " << report::total({1, 2, 3}) << " " << order.total() << "\n"; // ref: BANNER total
    return 0;
}
