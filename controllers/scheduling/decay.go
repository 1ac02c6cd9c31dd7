package scheduling

import (
	"context"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/quota"
)

// usageSampler samples the queues' and cohorts' usage into their decayed
// usage every interval (fairSharing.usage) and has their status refreshed
// with it. Leader only: the decayed usage is the scheduler's.
type usageSampler struct {
	state    *State
	clock    clock.Clock
	interval time.Duration
}

// NeedLeaderElection is true: the scheduler's cache is the leader's.
func (u *usageSampler) NeedLeaderElection() bool { return true }

func (u *usageSampler) Start(ctx context.Context) error {
	if err := u.state.WaitSynced(ctx); err != nil {
		return nil
	}
	log.FromContext(ctx).Info("Sampling usage for decayed fair sharing", "interval", u.interval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-u.clock.After(u.interval):
		}
		u.state.Cache.SampleUsage(u.clock.Now())
		u.state.refreshClusterQueues(u.state.Cache.ClusterQueueNames()...)
		u.state.Queues.Notify()
	}
}

// decayedStatus is a decayed usage as status.fairSharing shows it, to a
// thousandth of a unit (a GPU decayed to 0.3 shows as 300m: rounding to
// whole devices would lose what a restart must continue from).
func decayedStatus(d quota.DecayedUsage) ([]musterv1beta1.FlavorUsage, *metav1.Time) {
	if d.At.IsZero() {
		return nil, nil
	}
	byFlavor := map[string][]musterv1beta1.ResourceUsage{}
	for fr, v := range d.Usage {
		q := decayedQuantity(fr.Resource, v)
		if q.IsZero() {
			continue
		}
		byFlavor[fr.Flavor] = append(byFlavor[fr.Flavor], musterv1beta1.ResourceUsage{Name: corev1.ResourceName(fr.Resource), Total: q})
	}
	at := metav1.NewTime(d.At)
	return groupedByFlavor(byFlavor), &at
}

// decayedQuantity is a decayed amount in the core's units as a quantity,
// to a thousandth of the resource's unit.
func decayedQuantity(res string, v float64) resource.Quantity {
	if core.MilliUnits(res) {
		return *resource.NewMilliQuantity(int64(math.Round(v)), resource.DecimalSI)
	}
	return *resource.NewMilliQuantity(int64(math.Round(v*1000)), resource.DecimalSI)
}

// decayedAmount reads decayedQuantity back into the core's units.
func decayedAmount(res string, q resource.Quantity) float64 {
	if core.MilliUnits(res) {
		return float64(q.MilliValue())
	}
	return float64(q.MilliValue()) / 1000
}

// decayedFromStatus reads a decayed usage a status kept.
func decayedFromStatus(fs *musterv1beta1.FairSharingStatus) (quota.DecayedUsage, bool) {
	if fs == nil || fs.LastSampled == nil {
		return quota.DecayedUsage{}, false
	}
	d := quota.DecayedUsage{Usage: map[core.FlavorResource]float64{}, At: fs.LastSampled.Time}
	for _, f := range fs.DecayedUsage {
		for _, r := range f.Resources {
			fr := core.FlavorResource{Flavor: string(f.Name), Resource: string(r.Name)}
			d.Usage[fr] = decayedAmount(fr.Resource, r.Total)
		}
	}
	return d, true
}

// restoreDecayed gives the core the decayed usage a ClusterQueue's or
// cohort's status kept, so that a restart continues from it.
func (s *State) restoreDecayed(name string, cohort bool, fs *musterv1beta1.FairSharingStatus) {
	if d, ok := decayedFromStatus(fs); ok {
		s.Cache.RestoreDecayedUsage(name, cohort, d)
	}
}

// localQueueFairSharing is a LocalQueue's status.fairSharing: its weighted
// usage when its ClusterQueue uses admission fair sharing, and its decayed
// usage when usage decay is on; nil when neither.
func (s *State) localQueueFairSharing(key, clusterQueue string) *musterv1beta1.FairSharingStatus {
	var out *musterv1beta1.FairSharingStatus
	if s.Cache.UsesAdmissionFairSharing(clusterQueue) {
		out = &musterv1beta1.FairSharingStatus{WeightedShare: s.Cache.LocalQueueShare(key)}
	}
	if d, ok := s.Cache.LocalQueueDecayedUsage(key); ok {
		if out == nil {
			out = &musterv1beta1.FairSharingStatus{}
		}
		out.DecayedUsage, out.LastSampled = decayedStatus(d)
	}
	return out
}

// restoreLocalQueueDecayed gives the core the decayed usage a LocalQueue's
// status kept.
func (s *State) restoreLocalQueueDecayed(key string, fs *musterv1beta1.FairSharingStatus) {
	if d, ok := decayedFromStatus(fs); ok {
		s.Cache.RestoreLocalQueueDecayedUsage(key, d)
	}
}
