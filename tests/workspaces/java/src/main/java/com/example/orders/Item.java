package com.example.orders;

/** One line of an order. */
public record Item(String sku, long price, long quantity) { // def: class Item
}
