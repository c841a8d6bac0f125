package com.example.orders;

import java.util.List;

/** Entry point that places an order. */
public final class App { // def: class App
    // createSalesOrder is called below; this comment must not count.  noref: createSalesOrder
    static final String BANNER = "createSalesOrder demo"; // def: constant App.BANNER noref: createSalesOrder

    public static void main(String[] args) { // def: method App.main
        Order order = OrderService.createSalesOrder("ada", List.of(new Item("sku-1", 250, 2))); // ref: Order OrderService createSalesOrder Item
        System.out.println(BANNER + " " + Reports.total(new long[] {1, 2, 3}) + " " + order.total()); // ref: BANNER Reports total
    }
}
