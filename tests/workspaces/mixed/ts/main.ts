import { cartTotal, Line } from "./cart";

const lines: Line[] = [{ price: 3, quantity: 2 }];
console.log(cartTotal(lines));
