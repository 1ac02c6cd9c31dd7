package app

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// groupsOf summarises resource groups as "res,res:flavor,flavor; ...".
func groupsOf(rgs []musterv1beta1.ResourceGroup) string {
	var parts []string
	for _, rg := range rgs {
		var res, fl []string
		for _, r := range rg.CoveredResources {
			res = append(res, string(r))
		}
		for _, f := range rg.Flavors {
			fl = append(fl, string(f.Name))
		}
		parts = append(parts, strings.Join(res, ",")+":"+strings.Join(fl, ","))
	}
	return strings.Join(parts, "; ")
}

func TestResourceGroupsFromFlags(t *testing.T) {
	for _, tc := range []struct {
		name, nominal, borrowing, want, err string
	}{
		{name: "one flavor", nominal: "a100:nvidia.com/gpu=8", want: "nvidia.com/gpu:a100"},
		{name: "fallback flavors share a group", nominal: "a100:nvidia.com/gpu=8;cpu=64,h100:nvidia.com/gpu=4;cpu=32", want: "nvidia.com/gpu,cpu:a100,h100"},
		{name: "disjoint resources, two groups", nominal: "a100:nvidia.com/gpu=8,pool:cpu=64;memory=1Ti", want: "nvidia.com/gpu:a100; cpu,memory:pool"},
		{name: "a resource in two groups", nominal: "a:cpu=1;memory=1Gi,b:cpu=2", err: "cpu is in flavors with different resources"},
		{name: "not a quantity", nominal: "a:cpu=lots", err: "cpu=lots"},
		{name: "no flavor", nominal: "cpu=1", err: "is not FLAVOR:RESOURCE=QTY"},
		{name: "flavor twice", nominal: "a:cpu=1,a:cpu=2", err: "flavor a given twice"},
		{name: "a limit on an unknown flavor", nominal: "a:cpu=1", borrowing: "b:cpu=1", err: "names flavor b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resourceGroups(tc.nominal, tc.borrowing, "")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := groupsOf(got); s != tc.want {
				t.Errorf("groups %s, want %s", s, tc.want)
			}
		})
	}
}

func TestBorrowingLimitLandsOnItsResource(t *testing.T) {
	got, err := resourceGroups("a:cpu=4;memory=8Gi", "a:memory=2Gi", "a:cpu=1")
	if err != nil {
		t.Fatal(err)
	}
	res := got[0].Flavors[0].Resources
	if res[0].BorrowingLimit != nil || res[0].LendingLimit.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("cpu limits: borrowing %v lending %v", res[0].BorrowingLimit, res[0].LendingLimit)
	}
	if res[1].BorrowingLimit.Cmp(resource.MustParse("2Gi")) != 0 || res[1].LendingLimit != nil {
		t.Errorf("memory limits: borrowing %v lending %v", res[1].BorrowingLimit, res[1].LendingLimit)
	}
}

func reservedAt(minute int) []metav1.Condition {
	return []metav1.Condition{{Type: musterv1beta1.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved",
		LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC))}}
}
