// Orders and their parts.

export const MAX_ITEMS = 50; // def: constant MAX_ITEMS

export interface Item { // def: interface Item
  sku: string;
  price: number;
  quantity: number;
}

/** Anything with a total price. */
export interface Priced { // def: interface Priced
  total(): number; // def: method Priced.total
}

export type OrderId = string; // def: type OrderId

/** A customer's order. */
export class Order implements Priced { // def: class Order ref: Priced
  constructor(
    public readonly customer: string,
    public readonly items: Item[], // ref: Item
  ) {}

  static create(customer: string, items: Item[]): Order { // def: method Order.create ref: Item Order
    if (items.length > MAX_ITEMS) { // ref: MAX_ITEMS
      throw new Error("too many items for createSalesOrder"); // noref: createSalesOrder
    }
    return new Order(customer, items); // ref: Order
  }

  total(): number { // def: method Order.total
    return this.items.reduce((sum, item) => sum + item.price * item.quantity, 0);
  }
}
