export interface Line {
  price: number;
  quantity: number;
}

export function cartTotal(lines: Line[]): number {
  return lines.reduce((sum, line) => sum + line.price * line.quantity, 0);
}
