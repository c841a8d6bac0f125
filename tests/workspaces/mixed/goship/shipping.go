package goship

// ShippingCost is the cost of sending a parcel of the given weight.
func ShippingCost(grams int) int {
	return 500 + grams/100
}
