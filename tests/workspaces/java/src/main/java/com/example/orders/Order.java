package com.example.orders;

import java.util.List;

/** A customer's order. */
public class Order implements Totaler { // def: class Order ref: Totaler
    /** The most items one order may hold. */
    public static final int MAX_ITEMS = 50; // def: constant Order.MAX_ITEMS

    private final String customer;
    private final List<Item> items; // ref: Item

    private Order(String customer, List<Item> items) { // def: method Order.Order ref: Item
        this.customer = customer;
        this.items = items;
    }

    /** Make an order, checking its size. */
    public static Order create(String customer, List<Item> items) { // def: method Order.create ref: Order Item
        if (items.size() > MAX_ITEMS) { // ref: MAX_ITEMS
            throw new IllegalArgumentException("too many items for createSalesOrder"); // noref: createSalesOrder
        }
        return new Order(customer, items); // ref: Order
    }

    @Override
    public long total() { // def: method Order.total
        return items.stream().mapToLong(i -> i.price() * i.quantity()).sum();
    }

    public String customer() { // def: method Order.customer
        return customer;
    }
}
