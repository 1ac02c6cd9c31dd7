package core

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Format renders an amount of a resource as Kubernetes would.
func Format(res string, amount int64) string {
	q := Quantity(res, amount)
	return q.String()
}

// Quantity is an amount of a resource as a Quantity, in the format
// Kubernetes shows that resource in.
func Quantity(res string, amount int64) resource.Quantity {
	switch {
	case MilliUnits(res):
		return *resource.NewMilliQuantity(amount, resource.DecimalSI)
	case res == "memory" || strings.HasSuffix(res, "storage") || strings.HasPrefix(res, "hugepages-"):
		return *resource.NewQuantity(amount, resource.BinarySI)
	}
	return *resource.NewQuantity(amount, resource.DecimalSI)
}

// Amount is a Quantity of a resource in the resource's unit (see
// MilliUnits); a fraction of a whole unit counts as one.
func Amount(res string, q resource.Quantity) int64 {
	if MilliUnits(res) {
		return q.MilliValue()
	}
	return q.Value()
}
