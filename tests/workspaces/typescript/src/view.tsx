import { Order } from "./order"; // ref: Order
import { createSalesOrder } from "./service"; // ref: createSalesOrder

type Props = { order: Order }; // def: type Props ref: Order

export function OrderView({ order }: Props) { // def: function OrderView ref: Props
  return <div title="createSalesOrder">{order.total()}</div>; // ref: total noref: createSalesOrder
}

export const NewOrderButton = () => ( // def: function NewOrderButton
  <button onClick={() => createSalesOrder("ada", [])}>new</button> // ref: createSalesOrder
);
