import { total } from "./report"; // ref: total
import { createSalesOrder } from "./service"; // ref: createSalesOrder

// createSalesOrder is called below; this comment must not count.  noref: createSalesOrder
const BANNER = "createSalesOrder demo"; // def: constant BANNER noref: createSalesOrder

export function main(): number { // def: function main
  const order = createSalesOrder("ada", [{ sku: "sku-1", price: 250, quantity: 2 }]); // ref: createSalesOrder
  console.log(BANNER, total([1, 2, 3])); // ref: BANNER total
  return order.total(); // ref: total
}
