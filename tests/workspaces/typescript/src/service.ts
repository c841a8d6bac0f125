import { Item, Order } from "./order"; // ref: Item Order

/** Create a sales order for a customer. */
export function createSalesOrder(customer: string, items: Item[]): Order { // def: function createSalesOrder ref: Item Order
  return Order.create(customer, items); // ref: Order create
}
