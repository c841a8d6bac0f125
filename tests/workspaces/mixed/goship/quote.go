package goship

// Quote adds shipping to a price.
func Quote(price int, grams int) int {
	return price + ShippingCost(grams)
}
