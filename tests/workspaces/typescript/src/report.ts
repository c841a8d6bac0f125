// Reports: a free function that happens to be called total (unrelated to Order.total).

export const total = (values: number[]): number => values.reduce((a, b) => a + b, 0); // def: function total
