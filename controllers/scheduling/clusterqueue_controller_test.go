package scheduling

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/test/builder"
)

// TestActiveCondition: a ClusterQueue that admits nothing says why, with a
// reason of its own per cause and a message that says what to change.
func TestActiveCondition(t *testing.T) {
	hold, now := musterv1beta1.Hold, metav1.NewTime(time.Now())
	for name, tc := range map[string]struct {
		flavor   bool
		stop     *musterv1beta1.StopPolicy
		cohort   string
		deleted  bool
		status   metav1.ConditionStatus
		reason   string
		contains string
	}{
		"ready":           {flavor: true, status: metav1.ConditionTrue, reason: musterv1beta1.ReasonReady},
		"flavor missing":  {status: metav1.ConditionFalse, reason: musterv1beta1.ReasonFlavorNotFound, contains: "ResourceFlavor a100 not found"},
		"stopped":         {flavor: true, stop: &hold, status: metav1.ConditionFalse, reason: musterv1beta1.ReasonStopped, contains: "stopped"},
		"being deleted":   {flavor: true, deleted: true, status: metav1.ConditionFalse, reason: musterv1beta1.ReasonTerminating},
		"in cohort cycle": {flavor: true, cohort: "left", status: metav1.ConditionFalse, reason: musterv1beta1.ReasonCohortCycle, contains: "left -> right -> left"},
		"in a tree":       {flavor: true, cohort: "leaf", status: metav1.ConditionTrue, reason: musterv1beta1.ReasonReady},
	} {
		t.Run(name, func(t *testing.T) {
			state := NewState()
			if tc.flavor {
				state.ApplyFlavor(builder.MakeResourceFlavor("a100").QuotaOnly().Obj())
			}
			for child, parent := range map[string]string{"left": "right", "right": "left", "leaf": "root"} {
				state.applyCohort(&musterv1beta1.Cohort{ObjectMeta: metav1.ObjectMeta{Name: child},
					Spec: musterv1beta1.CohortSpec{Parent: musterv1beta1.CohortReference(parent)}})
			}
			cq := &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: musterv1beta1.ClusterQueueSpec{
				Cohort: musterv1beta1.CohortReference(tc.cohort), StopPolicy: tc.stop, NamespaceSelector: &metav1.LabelSelector{},
				ResourceGroups: []musterv1beta1.ResourceGroup{{CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"},
					Flavors: []musterv1beta1.FlavorQuotas{{Name: "a100", Resources: []musterv1beta1.ResourceQuota{
						{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("4")}}}}}}}}
			if tc.deleted {
				cq.DeletionTimestamp = &now
			}
			state.ApplyClusterQueue(cq)
			c := activeCondition(cq, state.Cache.ClusterQueueStatus("cq"))
			if c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.contains) {
				t.Errorf("Active = %s/%s %q, want %s/%s containing %q", c.Status, c.Reason, c.Message, tc.status, tc.reason, tc.contains)
			}
		})
	}
}
