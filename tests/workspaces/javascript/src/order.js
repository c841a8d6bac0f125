// Orders and their parts.

export const MAX_ITEMS = 50; // def: constant MAX_ITEMS

/** Anything with a total price. */
export class Priced { // def: class Priced
  total() { // def: method Priced.total
    throw new Error("not implemented");
  }
}

/** A customer's order. */
export class Order extends Priced { // def: class Order ref: Priced
  constructor(customer, items) { // def: method Order.constructor
    super();
    this.customer = customer;
    this.items = items;
  }

  static create(customer, items) { // def: method Order.create
    if (items.length > MAX_ITEMS) { // ref: MAX_ITEMS
      throw new Error("too many items for createSalesOrder"); // noref: createSalesOrder
    }
    return new Order(customer, items); // ref: Order
  }

  total() { // def: method Order.total
    return this.items.reduce((sum, item) => sum + item.price * item.quantity, 0);
  }
}
