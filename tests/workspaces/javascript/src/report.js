// Reports: a free function that happens to be called total (unrelated to Order.total).

export const total = function (values) { // def: function total
  return values.reduce((a, b) => a + b, 0);
};
