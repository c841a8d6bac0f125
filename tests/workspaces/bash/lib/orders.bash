#!/usr/bin/env bash
# Sales orders: creation and totals.

ORDERS_DIR="${ORDERS_DIR:-/tmp/orders}"

# Create a sales order for a customer.
create_sales_order() { # def: function create_sales_order
  local customer="$1"
  echo "$customer" >"$ORDERS_DIR/$customer" # ref: ORDERS_DIR customer
}

function order_total { # def: function order_total
  wc -l <"$ORDERS_DIR/$1" # noref: create_sales_order is not called here
}

reorder() {  # def: function reorder
  create_sales_order "$1" && order_total "$1" # ref: create_sales_order order_total
}
