package com.example.orders;

import java.util.List;

/** Creating orders. */
public final class OrderService { // def: class OrderService
    private OrderService() {}

    /** Create a sales order for a customer. */
    public static Order createSalesOrder(String customer, List<Item> items) { // def: method OrderService.createSalesOrder ref: Order Item
        return Order.create(customer, items); // ref: Order create
    }
}
