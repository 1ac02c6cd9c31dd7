package admissionchecks

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
)

// The third-party check of docs/admission-checks.md, as written there: a
// controller of its own, using only Muster's API types.

// approverName is the controllerName of the example's AdmissionChecks.
const approverName = "example.com/approver"

// approver admits the workloads of namespaces labelled approved=true,
// adding a label to their pods, and rejects the others.
type approver struct{ client.Client }

func (a *approver) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl musterv1beta1.Workload
	if err := a.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	orig, answered := wl.DeepCopy(), false
	for i := range wl.Status.AdmissionChecks {
		st := &wl.Status.AdmissionChecks[i]
		var ac musterv1beta1.AdmissionCheck
		if err := a.Get(ctx, client.ObjectKey{Name: string(st.Name)}, &ac); err != nil ||
			ac.Spec.ControllerName != approverName || st.State != musterv1beta1.CheckStatePending {
			continue // not ours, or answered
		}
		var ns corev1.Namespace
		if err := a.Get(ctx, client.ObjectKey{Name: wl.Namespace}, &ns); err != nil {
			return ctrl.Result{}, err
		}
		st.LastTransitionTime, answered = metav1.Now(), true
		if ns.Labels["approved"] != "true" {
			st.State, st.Message = musterv1beta1.CheckStateRejected, "namespace "+ns.Name+" is not approved"
			continue
		}
		st.State, st.Message = musterv1beta1.CheckStateReady, "approved"
		for _, ps := range wl.Spec.PodSets {
			st.PodSetUpdates = append(st.PodSetUpdates, musterv1beta1.PodSetUpdate{
				Name: ps.Name, Labels: map[string]string{"example.com/approved": "true"}})
		}
	}
	if !answered {
		return ctrl.Result{}, nil
	}
	// Only the status, with an optimistic lock: a conflict is retried.
	return ctrl.Result{}, a.Status().Patch(ctx, &wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// activate marks the example's AdmissionChecks Active: a ClusterQueue
// using a check that is not admits nothing.
func (a *approver) activate(ctx context.Context, name string) error {
	var ac musterv1beta1.AdmissionCheck
	if err := a.Get(ctx, client.ObjectKey{Name: name}, &ac); err != nil {
		return err
	}
	meta.SetStatusCondition(&ac.Status.Conditions, metav1.Condition{
		Type: musterv1beta1.AdmissionCheckActive, Status: metav1.ConditionTrue, Reason: "Active", Message: "answered by the approver"})
	return a.Status().Update(ctx, &ac)
}

func TestTheDocsThirdPartyCheck(t *testing.T) {
	env.StartManager(t)
	approved := newCheckedQueue(t, "8", false)
	check := "approver-" + approved.ns
	createCheck(t, &musterv1beta1.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: check},
		Spec: musterv1beta1.AdmissionCheckSpec{ControllerName: approverName}})
	a := startApprover(t)
	eventually(t, func(g Gomega) { g.Expect(a.activate(context.Background(), check)).To(Succeed()) })
	setChecks(t, approved.cq, check)
	labelNamespace(t, approved.ns)
	j := approved.job(t, "approved", 1, "1")
	eventually(t, func(g Gomega) {
		job := env.GetJob(g, j)
		g.Expect(*job.Spec.Suspend).To(BeFalse())
		g.Expect(job.Spec.Template.Labels).To(HaveKeyWithValue("example.com/approved", "true"))
	})

	other := newCheckedQueue(t, "8", false)
	setChecks(t, other.cq, check)
	k := other.job(t, "unapproved", 1, "1")
	eventually(t, func(g Gomega) {
		wl := env.WorkloadOfJob(g, k)
		g.Expect(workload.IsActive(wl)).To(BeFalse())
		g.Expect(meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadEvicted).Message).To(ContainSubstring("is not approved"))
	})
}

// startApprover runs the example in a manager of its own, as a third
// party's deployment would.
func startApprover(t *testing.T) *approver {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	a := &approver{Client: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).For(&musterv1beta1.Workload{}).Named("approver-" + time.Now().Format("150405.000")).Complete(a); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("approver cache did not sync")
	}
	return a
}

func labelNamespace(t *testing.T, ns string) {
	t.Helper()
	eventually(t, func(g Gomega) {
		var obj corev1.Namespace
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, &obj)).To(Succeed())
		if obj.Labels == nil {
			obj.Labels = map[string]string{}
		}
		obj.Labels["approved"] = "true"
		g.Expect(env.Client.Update(context.Background(), &obj)).To(Succeed())
	})
}
