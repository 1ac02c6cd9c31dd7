package scheduling

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// rebuild loads every object into the core once, on every replica, before
// the controllers apply anything and before the first cycle, so that
// nothing is admitted against a half-known cache after a restart, whatever
// order the informers deliver objects in.
func rebuild(ctx context.Context, reader client.Reader, state *State, clk clock.PassiveClock) error {
	var rfs musterv1beta1.ResourceFlavorList
	var cohorts musterv1beta1.CohortList
	var cqs musterv1beta1.ClusterQueueList
	var lqs musterv1beta1.LocalQueueList
	var wls musterv1beta1.WorkloadList
	var nss corev1.NamespaceList
	var topologies musterv1beta1.TopologyList
	var nodes corev1.NodeList
	var pods corev1.PodList
	var wpcs musterv1beta1.WorkloadPriorityClassList
	var acs musterv1beta1.AdmissionCheckList
	for _, l := range []client.ObjectList{&rfs, &cohorts, &cqs, &lqs, &wls, &nss, &topologies, &nodes, &pods, &wpcs, &acs} {
		if err := reader.List(ctx, l); err != nil {
			return fmt.Errorf("rebuilding the scheduling cache: %w", err)
		}
	}
	nsLabels := make(map[string]map[string]string, len(nss.Items))
	for _, ns := range nss.Items {
		nsLabels[ns.Name] = ns.Labels
	}
	for i := range rfs.Items {
		state.ApplyFlavor(&rfs.Items[i])
	}
	for i := range topologies.Items {
		_ = state.applyTopology(&topologies.Items[i]) // its controller reports an error
	}
	for i := range nodes.Items {
		state.applyNode(&nodes.Items[i])
	}
	for i := range pods.Items {
		state.applyPod(&pods.Items[i])
	}
	for i := range wpcs.Items {
		state.applyPriorityClass(&wpcs.Items[i])
	}
	for i := range acs.Items {
		state.applyCheck(&acs.Items[i])
	}
	// The decayed usage in their status is taken by the replica that
	// leads, before its first cycle (restoreDecayedFrom).
	for i := range cohorts.Items {
		state.applyCohort(&cohorts.Items[i])
	}
	for i := range cqs.Items {
		state.ApplyClusterQueue(&cqs.Items[i])
	}
	for i := range lqs.Items {
		state.ApplyLocalQueue(&lqs.Items[i])
	}
	for i := range wls.Items {
		state.ApplyWorkload(&wls.Items[i], nsLabels[wls.Items[i].Namespace], clk.Now())
	}
	log.FromContext(ctx).Info("Rebuilt scheduling cache", "flavors", len(rfs.Items), "clusterQueues", len(cqs.Items),
		"localQueues", len(lqs.Items), "workloads", len(wls.Items), "topologies", len(topologies.Items), "nodes", len(nodes.Items))
	state.markSynced()
	state.Queues.Notify()
	<-ctx.Done()
	return nil
}
