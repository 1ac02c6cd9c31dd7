package scheduling

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/source"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Every replica keeps the scheduling state, so that every replica can
// answer the visibility API and the dashboard from it (the chart runs two):
// the core controllers run on all of them, fed by the informers, and the
// state is rebuilt at start on each. Only the leader acts on it: it runs
// the scheduler, and the controllers' writes and metrics are the leader's
// alone. A follower's controllers skip their writes (leaderWrites); when it
// is elected, every object is reconciled again (resync), so what it
// skipped is written then.

// leadership is whether this replica leads, and the resync channels of the
// controllers that write.
type leadership struct {
	leading atomic.Bool
	resync  map[string]chan event.GenericEvent
}

// resyncKinds are the objects whose controllers write, by controller name.
var resyncKinds = map[string]func() client.ObjectList{
	"resourceflavor": func() client.ObjectList { return &musterv1beta1.ResourceFlavorList{} },
	"cohort":         func() client.ObjectList { return &musterv1beta1.CohortList{} },
	"clusterqueue":   func() client.ObjectList { return &musterv1beta1.ClusterQueueList{} },
	"localqueue":     func() client.ObjectList { return &musterv1beta1.LocalQueueList{} },
	"workload":       func() client.ObjectList { return &musterv1beta1.WorkloadList{} },
	"topology":       func() client.ObjectList { return &musterv1beta1.TopologyList{} },
}

func newLeadership() *leadership {
	l := &leadership{resync: map[string]chan event.GenericEvent{}}
	for name := range resyncKinds {
		l.resync[name] = make(chan event.GenericEvent, 1024)
	}
	return l
}

// Leading reports whether this replica leads (or runs without leader
// election).
func (s *State) Leading() bool { return s.leader.leading.Load() }

// everyReplica is the options of a core controller: it runs on every
// replica, not only the leader.
func everyReplica(o controller.Options) controller.Options {
	o.NeedLeaderElection = ptr.To(false)
	return o
}

// resyncSource is the source through which a controller is handed every
// object again when this replica is elected.
func (s *State) resyncSource(controllerName string) source.Source {
	return source.Channel(s.leader.resync[controllerName], &handler.EnqueueRequestForObject{})
}

// BecomeLeader marks the replica leading and hands every object of the
// writing controllers to them again, from the informers' cache.
func (s *State) BecomeLeader(ctx context.Context, reader client.Reader) {
	s.leader.leading.Store(true)
	for name, newList := range resyncKinds {
		list := newList()
		if err := reader.List(ctx, list); err != nil {
			log.FromContext(ctx).Error(err, "Listing objects to reconcile as the new leader", "controller", name)
			continue
		}
		ch := s.leader.resync[name]
		objs := objectsOf(list)
		go func() {
			for _, o := range objs {
				select {
				case ch <- event.GenericEvent{Object: o}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
}

// leaderWrites is the controllers' client: its writes are skipped while the
// replica does not lead (the leader makes them, and this replica makes them
// too once elected: becomeLeader). Reads go through.
func leaderWrites(c client.Client, s *State) client.Client { return &leaderClient{Client: c, state: s} }

type leaderClient struct {
	client.Client
	state *State
}

func (c *leaderClient) follower() bool { return !c.state.Leading() }

func (c *leaderClient) Create(ctx context.Context, o client.Object, opts ...client.CreateOption) error {
	if c.follower() {
		return nil
	}
	return c.Client.Create(ctx, o, opts...)
}

func (c *leaderClient) Update(ctx context.Context, o client.Object, opts ...client.UpdateOption) error {
	if c.follower() {
		return nil
	}
	return c.Client.Update(ctx, o, opts...)
}

func (c *leaderClient) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	if c.follower() {
		return nil
	}
	return c.Client.Patch(ctx, o, p, opts...)
}

func (c *leaderClient) Delete(ctx context.Context, o client.Object, opts ...client.DeleteOption) error {
	if c.follower() {
		return nil
	}
	return c.Client.Delete(ctx, o, opts...)
}

func (c *leaderClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *leaderClient) SubResource(name string) client.SubResourceClient {
	return &leaderSubResource{SubResourceClient: c.Client.SubResource(name), c: c}
}

type leaderSubResource struct {
	client.SubResourceClient
	c *leaderClient
}

func (s *leaderSubResource) Create(ctx context.Context, o, sub client.Object, opts ...client.SubResourceCreateOption) error {
	if s.c.follower() {
		return nil
	}
	return s.SubResourceClient.Create(ctx, o, sub, opts...)
}

func (s *leaderSubResource) Update(ctx context.Context, o client.Object, opts ...client.SubResourceUpdateOption) error {
	if s.c.follower() {
		return nil
	}
	return s.SubResourceClient.Update(ctx, o, opts...)
}

func (s *leaderSubResource) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	if s.c.follower() {
		return nil
	}
	return s.SubResourceClient.Patch(ctx, o, p, opts...)
}

// objectsOf is the items of a list as objects.
func objectsOf(list client.ObjectList) []client.Object {
	items, _ := meta.ExtractList(list)
	out := make([]client.Object, 0, len(items))
	for _, it := range items {
		if o, ok := it.(client.Object); ok {
			out = append(out, o)
		}
	}
	return out
}

// RestoreDecayedFrom takes the decayed usage the previous leader last wrote
// into the queues' and cohorts' status, as a fresh start does: a follower
// samples none of its own.
func (s *State) RestoreDecayedFrom(ctx context.Context, reader client.Reader) error {
	var cohorts musterv1beta1.CohortList
	var cqs musterv1beta1.ClusterQueueList
	var lqs musterv1beta1.LocalQueueList
	for _, l := range []client.ObjectList{&cohorts, &cqs, &lqs} {
		if err := reader.List(ctx, l); err != nil {
			return err
		}
	}
	for i := range cohorts.Items {
		s.restoreDecayed(cohorts.Items[i].Name, true, cohorts.Items[i].Status.FairSharing)
	}
	for i := range cqs.Items {
		s.restoreDecayed(cqs.Items[i].Name, false, cqs.Items[i].Status.FairSharing)
	}
	for i := range lqs.Items {
		s.restoreLocalQueueDecayed(lqs.Items[i].Namespace+"/"+lqs.Items[i].Name, lqs.Items[i].Status.FairSharing)
	}
	return nil
}
