package orders

// CreateSalesOrder creates a sales order for a customer.
func CreateSalesOrder(customer string, items []Item) (*Order, error) { // def: function CreateSalesOrder ref: Item Order
	return Create(customer, items) // ref: Create
}
