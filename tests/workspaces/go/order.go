// Package orders is a tiny workspace for navigation tests.
package orders

import "errors"

// MaxItems is the most items one order may hold.
const MaxItems = 50 // def: constant MaxItems

// Item is one line of an order.
type Item struct { // def: struct Item
	SKU      string
	Price    int
	Quantity int
}

// Totaler is anything with a total price.
type Totaler interface { // def: interface Totaler
	Total() int // def: method Totaler.Total
}

// OrderID identifies an order.
type OrderID string // def: type OrderID

// Order is a customer's order.
type Order struct { // def: struct Order
	Customer string
	Items    []Item // ref: Item
}

// Create makes an order, checking its size.
func Create(customer string, items []Item) (*Order, error) { // def: function Create ref: Item Order
	if len(items) > MaxItems { // ref: MaxItems
		return nil, errors.New("too many items for CreateSalesOrder") // noref: CreateSalesOrder
	}
	return &Order{Customer: customer, Items: items}, nil // ref: Order
}

// Total is the order's total in cents.
func (o *Order) Total() int { // def: method Order.Total ref: Order
	sum := 0
	for _, item := range o.Items {
		sum += item.Price * item.Quantity
	}
	return sum
}

var _ Totaler = (*Order)(nil) // ref: Totaler Order
