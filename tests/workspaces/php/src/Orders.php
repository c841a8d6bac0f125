<?php

namespace Shop;

interface Priced // def: interface Priced
{
    public function price(): int; // def: method Priced.price
}

/** A sales order. */
class Order implements Priced // def: class Order ref: Priced
{
    const MAX_ITEMS = 50; // def: constant Order.MAX_ITEMS

    public function __construct(private array $items) {} // def: method Order.__construct

    public function price(): int // def: method Order.price
    {
        return array_sum(array_map(fn ($i) => $i->price(), $this->items)); // ref: items
    }
}

trait Discounted // def: trait Discounted
{
    public function discount(): int { return 0; } // def: method Discounted.discount
}

/** Create a sales order for a customer. */
function create_sales_order(array $items): Order // def: function create_sales_order
{
    return new Order($items); // ref: Order noref: create_sales_order is not called here
}
