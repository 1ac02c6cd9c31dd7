package multicluster

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/multicluster"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

// The workers of the suite are Active, and so is the check dispatching to
// them.
func TestWorkersAndCheckAreActive(t *testing.T) {
	for _, name := range []string{"worker1", "worker2"} {
		expectCluster(t, name, metav1.ConditionTrue, musterv1beta1.ReasonMultiClusterActive)
	}
	expectCheck(t, check, metav1.ConditionTrue, multicluster.ReasonCheckActive)
}

// A MultiCluster whose Secret is missing, or whose kubeconfig asks for what
// Muster refuses to do, says so; a check with some usable clusters left
// still dispatches, one with none does not.
func TestBadClustersSayWhy(t *testing.T) {
	create(t, MakeMultiCluster("no-secret", "nowhere"))
	expectCluster(t, "no-secret", metav1.ConditionFalse, multicluster.ReasonBadKubeConfig)

	create(t, MakeKubeConfigSecret("garbage", managerNS, []byte("not a kubeconfig")), MakeMultiCluster("garbage", "garbage"))
	expectCluster(t, "garbage", metav1.ConditionFalse, multicluster.ReasonBadKubeConfig)

	create(t, MakeKubeConfigSecret("insecure", managerNS, insecureKubeConfig(t)), MakeMultiCluster("insecure", "insecure"))
	expectCluster(t, "insecure", metav1.ConditionFalse, multicluster.ReasonInsecureKubeConfig)

	ac, cfg := MakeMultiClusterCheck("partial", "worker1", "no-secret", "missing")
	create(t, cfg, ac)
	expectCheck(t, "partial", metav1.ConditionTrue, multicluster.ReasonSomeActiveClusters)
	ac, cfg = MakeMultiClusterCheck("unusable", "no-secret", "missing")
	create(t, cfg, ac)
	expectCheck(t, "unusable", metav1.ConditionFalse, multicluster.ReasonNoUsableClusters)
}

// insecureKubeConfig is worker1's kubeconfig with TLS verification off.
func insecureKubeConfig(t *testing.T) []byte {
	t.Helper()
	raw, err := worker1.KubeConfigAs("insecure", "")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.Load(raw)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for _, c := range cfg.Clusters {
		c.InsecureSkipTLSVerify, c.CertificateAuthorityData = true, nil
	}
	out, err := clientcmd.Write(*cfg)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return out
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		NewWithT(t).Expect(manager.Client.Create(context.Background(), o)).To(Succeed())
		t.Cleanup(func() { _ = manager.Client.Delete(context.Background(), o) })
	}
}

func expectCluster(t *testing.T, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	expectActive(t, &musterv1beta1.MultiCluster{}, name, status, reason)
}

func expectCheck(t *testing.T, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	expectActive(t, &musterv1beta1.AdmissionCheck{}, name, status, reason)
}

// expectActive waits for the Active condition of a MultiCluster or an
// AdmissionCheck (the same condition type on both).
func expectActive[T interface {
	client.Object
	*musterv1beta1.MultiCluster | *musterv1beta1.AdmissionCheck
}](t *testing.T, obj T, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	eventually(t, framework.Timeout, func(g Gomega) {
		g.Expect(manager.Client.Get(context.Background(), client.ObjectKey{Name: name}, obj)).To(Succeed())
		var conds []metav1.Condition
		switch o := any(obj).(type) {
		case *musterv1beta1.MultiCluster:
			conds = o.Status.Conditions
		case *musterv1beta1.AdmissionCheck:
			conds = o.Status.Conditions
		}
		c := meta.FindStatusCondition(conds, "Active")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status), c.Message)
		g.Expect(c.Reason).To(Equal(reason), c.Message)
	})
}
