import { Order } from "./order.js"; // ref: Order

/** Create a sales order for a customer. */
export function createSalesOrder(customer, items) { // def: function createSalesOrder
  return Order.create(customer, items); // ref: Order create
}
