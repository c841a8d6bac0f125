// Package report has a free function that happens to be called Total.
package report

// Total sums values (unrelated to Order.Total).
func Total(values []int) int { // def: function Total
	sum := 0
	for _, v := range values {
		sum += v
	}
	return sum
}
