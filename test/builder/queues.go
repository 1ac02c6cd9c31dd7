// Package builder builds Muster and job objects for tests in one expression:
//
//	MakeClusterQueue("cq").Cohort("team").
//		ResourceGroup(MakeFlavorQuotas("a100").Resource("nvidia.com/gpu", "8").Obj()).Obj()
//
// Every builder starts from a valid object and Obj returns a fresh copy.
package builder

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// ClusterQueueBuilder builds a ClusterQueue.
type ClusterQueueBuilder struct{ cq musterv1beta1.ClusterQueue }

// MakeClusterQueue starts a ClusterQueue that selects every namespace.
func MakeClusterQueue(name string) *ClusterQueueBuilder {
	return &ClusterQueueBuilder{cq: musterv1beta1.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       musterv1beta1.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{}},
	}}
}

// Cohort puts the queue in a cohort.
func (b *ClusterQueueBuilder) Cohort(name string) *ClusterQueueBuilder {
	b.cq.Spec.Cohort = musterv1beta1.CohortReference(name)
	return b
}

// ResourceGroup adds a group covering the resources of the first flavor.
func (b *ClusterQueueBuilder) ResourceGroup(flavors ...musterv1beta1.FlavorQuotas) *ClusterQueueBuilder {
	b.cq.Spec.ResourceGroups = append(b.cq.Spec.ResourceGroups, MakeResourceGroup(flavors...))
	return b
}

// QueueingStrategy sets the queueing strategy.
func (b *ClusterQueueBuilder) QueueingStrategy(s musterv1beta1.QueueingStrategy) *ClusterQueueBuilder {
	b.cq.Spec.QueueingStrategy = s
	return b
}

// StopPolicy sets the stop policy.
func (b *ClusterQueueBuilder) StopPolicy(p musterv1beta1.StopPolicy) *ClusterQueueBuilder {
	b.cq.Spec.StopPolicy = &p
	return b
}

// NamespaceSelector sets the namespace selector.
func (b *ClusterQueueBuilder) NamespaceSelector(s *metav1.LabelSelector) *ClusterQueueBuilder {
	b.cq.Spec.NamespaceSelector = s
	return b
}

// Preemption sets the preemption policy.
func (b *ClusterQueueBuilder) Preemption(p musterv1beta1.ClusterQueuePreemption) *ClusterQueueBuilder {
	b.cq.Spec.Preemption = &p
	return b
}

// AdmissionChecks sets the checks every workload of the queue passes.
func (b *ClusterQueueBuilder) AdmissionChecks(names ...string) *ClusterQueueBuilder {
	for _, n := range names {
		b.cq.Spec.AdmissionChecks = append(b.cq.Spec.AdmissionChecks, musterv1beta1.AdmissionCheckReference(n))
	}
	return b
}

// Obj returns the ClusterQueue.
func (b *ClusterQueueBuilder) Obj() *musterv1beta1.ClusterQueue { return b.cq.DeepCopy() }

// MakeResourceGroup builds a group covering the resources of the first flavor.
func MakeResourceGroup(flavors ...musterv1beta1.FlavorQuotas) musterv1beta1.ResourceGroup {
	rg := musterv1beta1.ResourceGroup{Flavors: flavors}
	if len(flavors) > 0 {
		for _, r := range flavors[0].Resources {
			rg.CoveredResources = append(rg.CoveredResources, r.Name)
		}
	}
	return rg
}

// FlavorQuotasBuilder builds the quota of one flavor.
type FlavorQuotasBuilder struct{ fq musterv1beta1.FlavorQuotas }

// MakeFlavorQuotas starts the quota of a flavor.
func MakeFlavorQuotas(flavor string) *FlavorQuotasBuilder {
	return &FlavorQuotasBuilder{fq: musterv1beta1.FlavorQuotas{Name: musterv1beta1.ResourceFlavorReference(flavor)}}
}

// Resource adds a resource's quota: nominal, then optional borrowing and
// lending limits ("" leaves a limit unset).
func (b *FlavorQuotasBuilder) Resource(name corev1.ResourceName, nominal string, limits ...string) *FlavorQuotasBuilder {
	rq := musterv1beta1.ResourceQuota{Name: name, NominalQuota: resource.MustParse(nominal)}
	if len(limits) > 0 && limits[0] != "" {
		rq.BorrowingLimit = ptr.To(resource.MustParse(limits[0]))
	}
	if len(limits) > 1 && limits[1] != "" {
		rq.LendingLimit = ptr.To(resource.MustParse(limits[1]))
	}
	b.fq.Resources = append(b.fq.Resources, rq)
	return b
}

// Obj returns the flavor quotas.
func (b *FlavorQuotasBuilder) Obj() musterv1beta1.FlavorQuotas { return *b.fq.DeepCopy() }

// LocalQueueBuilder builds a LocalQueue.
type LocalQueueBuilder struct{ lq musterv1beta1.LocalQueue }

// MakeLocalQueue starts a LocalQueue.
func MakeLocalQueue(name, namespace string) *LocalQueueBuilder {
	return &LocalQueueBuilder{lq: musterv1beta1.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// ClusterQueue sets the ClusterQueue.
func (b *LocalQueueBuilder) ClusterQueue(name string) *LocalQueueBuilder {
	b.lq.Spec.ClusterQueue = musterv1beta1.ClusterQueueReference(name)
	return b
}

// StopPolicy sets the stop policy.
func (b *LocalQueueBuilder) StopPolicy(p musterv1beta1.StopPolicy) *LocalQueueBuilder {
	b.lq.Spec.StopPolicy = &p
	return b
}

// Obj returns the LocalQueue.
func (b *LocalQueueBuilder) Obj() *musterv1beta1.LocalQueue { return b.lq.DeepCopy() }

// ResourceFlavorBuilder builds a ResourceFlavor.
type ResourceFlavorBuilder struct{ rf musterv1beta1.ResourceFlavor }

// MakeResourceFlavor starts a ResourceFlavor.
func MakeResourceFlavor(name string) *ResourceFlavorBuilder {
	return &ResourceFlavorBuilder{rf: musterv1beta1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

// NodeLabel adds a node label.
func (b *ResourceFlavorBuilder) NodeLabel(k, v string) *ResourceFlavorBuilder {
	if b.rf.Spec.NodeLabels == nil {
		b.rf.Spec.NodeLabels = map[string]string{}
	}
	b.rf.Spec.NodeLabels[k] = v
	return b
}

// Taint adds a node taint.
func (b *ResourceFlavorBuilder) Taint(t corev1.Taint) *ResourceFlavorBuilder {
	b.rf.Spec.NodeTaints = append(b.rf.Spec.NodeTaints, t)
	return b
}

// Toleration adds a toleration.
func (b *ResourceFlavorBuilder) Toleration(t corev1.Toleration) *ResourceFlavorBuilder {
	b.rf.Spec.Tolerations = append(b.rf.Spec.Tolerations, t)
	return b
}

// NodeFit sets how the flavor checks that its nodes hold a workload.
func (b *ResourceFlavorBuilder) NodeFit(m musterv1beta1.NodeFitMode) *ResourceFlavorBuilder {
	b.rf.Spec.NodeFit = m
	return b
}

// QuotaOnly makes the flavor admit on quota alone (node fit None): for
// suites on an API server without nodes, where the default, Check, would
// admit nothing.
func (b *ResourceFlavorBuilder) QuotaOnly() *ResourceFlavorBuilder {
	return b.NodeFit(musterv1beta1.NodeFitNone)
}

// Obj returns the ResourceFlavor.
func (b *ResourceFlavorBuilder) Obj() *musterv1beta1.ResourceFlavor { return b.rf.DeepCopy() }

// MakeCohort builds a Cohort with an optional parent.
func MakeCohort(name, parent string) *musterv1beta1.Cohort {
	return &musterv1beta1.Cohort{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       musterv1beta1.CohortSpec{Parent: musterv1beta1.CohortReference(parent)},
	}
}

// MakeWorkloadPriorityClass builds a WorkloadPriorityClass.
func MakeWorkloadPriorityClass(name string, value int32) *musterv1beta1.WorkloadPriorityClass {
	return &musterv1beta1.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
}

// GangScheduling names the gang scheduler (and its queue) that binds the
// pods of the jobs the queue admits.
func (b *ClusterQueueBuilder) GangScheduling(p musterv1beta1.GangSchedulerProvider, queue string) *ClusterQueueBuilder {
	b.cq.Spec.GangScheduling = &musterv1beta1.GangScheduling{Provider: p, Queue: queue}
	return b
}
