package main

import (
	"fmt"

	"example.com/orders"
	"example.com/orders/report"
)

// CreateSalesOrder is called below; this comment must not count.  noref: CreateSalesOrder
const banner = "CreateSalesOrder demo" // def: constant banner noref: CreateSalesOrder

func main() { // def: function main
	order, err := orders.CreateSalesOrder("ada", []orders.Item{{SKU: "sku-1", Price: 250, Quantity: 2}}) // ref: CreateSalesOrder Item
	if err != nil {
		panic(err)
	}
	fmt.Println(banner, report.Total([]int{1, 2, 3}), order.Total()) // ref: banner Total
}
