package scheduling

import (
	"sort"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func sortResourceUsage(rs []musterv1beta1.ResourceUsage) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
}
