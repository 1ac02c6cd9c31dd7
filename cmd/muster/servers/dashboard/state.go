package dashboard

import (
	"context"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/scheduling"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/quota"
	"github.com/musterhq/muster/internal/core/scheduler"
)

// Source is what the dashboard reads: the scheduler's queues and cache in
// memory, and the manager's informer cache for the queues' specs. It makes
// no request to the API server.
type Source struct {
	Queues *queue.Queues
	Cache  *quota.Cache
	// Order is a ClusterQueue's pending order as its cycles try it
	// (scheduler.AdmissionOrders); nil takes scheduler.InAdmissionOrder.
	Order func(clusterQueue string, o queue.PendingOrder) queue.PendingOrder
	// Reader is the manager's (cached) client.
	Reader client.Reader
	Reason func(key string) string
	Recent func() []scheduling.RecentEvent
	Synced func() bool
	// Leading is whether this replica leads: only the leader's scheduler
	// has recent decisions.
	Leading func() bool
}

// listed is how many pending and admitted workloads a queue shows.
const listed = 50

// State is what the page shows, as JSON.
type State struct {
	Time          time.Time                `json:"time"`
	Synced        bool                     `json:"synced"`
	Leading       bool                     `json:"leading"`
	Cohorts       []Cohort                 `json:"cohorts"`
	ClusterQueues []ClusterQueue           `json:"clusterQueues"`
	Recent        []scheduling.RecentEvent `json:"recent"`
}

// Cohort is a node of the cohort tree.
type Cohort struct {
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
}

// ClusterQueue is a queue with its quota bars and its workloads.
type ClusterQueue struct {
	Name     string     `json:"name"`
	Cohort   string     `json:"cohort,omitempty"`
	Active   bool       `json:"active"`
	Inactive string     `json:"inactive,omitempty"`
	Pending  int        `json:"pending"`
	Admitted int        `json:"admitted"`
	Quota    []Resource `json:"quota"`
	// WeightedShare is the fair-sharing share (thousandths), when on.
	WeightedShare int64      `json:"weightedShare"`
	PendingList   []Pending  `json:"pendingList"`
	AdmittedList  []Admitted `json:"admittedList"`
	// Hidden counts the listed admitted workloads of namespaces the viewer
	// may not list.
	Hidden int `json:"hidden,omitempty"`
}

// Resource is one bar: a flavor's resource, reserved against nominal.
type Resource struct {
	Flavor   string  `json:"flavor"`
	Resource string  `json:"resource"`
	Nominal  string  `json:"nominal"`
	Reserved string  `json:"reserved"`
	Borrowed string  `json:"borrowed"`
	Percent  float64 `json:"percent"`
}

// Pending is a waiting workload and its place.
type Pending struct {
	Workload       string `json:"workload"`
	LocalQueue     string `json:"localQueue"`
	Priority       int32  `json:"priority"`
	InClusterQueue int    `json:"inClusterQueue"`
	InLocalQueue   int    `json:"inLocalQueue"`
	Reason         string `json:"reason"`
	Waiting        string `json:"waiting"`
}

// Admitted is a workload holding quota.
type Admitted struct {
	Workload   string `json:"workload"`
	LocalQueue string `json:"localQueue"`
	Flavors    string `json:"flavors"`
	Since      string `json:"since"`
}

// build assembles the state at now, listing only the workloads of the
// namespaces may allows (all when nil).
func (s Source) build(ctx context.Context, now time.Time, may mayList) (*State, error) {
	st := &State{Time: now, Synced: s.Synced == nil || s.Synced(), Leading: s.Leading == nil || s.Leading(), Cohorts: []Cohort{}, ClusterQueues: []ClusterQueue{}, Recent: []scheduling.RecentEvent{}}
	var cohorts musterv1beta1.CohortList
	if err := s.Reader.List(ctx, &cohorts, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for _, c := range cohorts.Items {
		st.Cohorts = append(st.Cohorts, Cohort{Name: c.Name, Parent: string(c.Spec.Parent)})
	}
	var cqs musterv1beta1.ClusterQueueList
	if err := s.Reader.List(ctx, &cqs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, c := range st.Cohorts {
		known[c.Name] = true
	}
	for i := range cqs.Items {
		cq := s.clusterQueue(&cqs.Items[i], now, may)
		if cq.Cohort != "" && !known[cq.Cohort] {
			// A cohort named only by its queues exists all the same.
			known[cq.Cohort] = true
			st.Cohorts = append(st.Cohorts, Cohort{Name: cq.Cohort})
		}
		st.ClusterQueues = append(st.ClusterQueues, cq)
	}
	sort.Slice(st.Cohorts, func(i, j int) bool { return st.Cohorts[i].Name < st.Cohorts[j].Name })
	sort.Slice(st.ClusterQueues, func(i, j int) bool { return st.ClusterQueues[i].Name < st.ClusterQueues[j].Name })
	if s.Recent != nil {
		for _, e := range s.Recent() {
			if visible(may, e.Workload) {
				st.Recent = append(st.Recent, e)
			}
		}
	}
	return st, nil
}

// visible says whether a workload (namespace/name) may be listed.
func visible(may mayList, key string) bool {
	if may == nil {
		return true
	}
	ns, _, _ := strings.Cut(key, "/")
	return may(ns)
}

func (s Source) clusterQueue(obj *musterv1beta1.ClusterQueue, now time.Time, may mayList) ClusterQueue {
	status := s.Cache.ClusterQueueStatus(obj.Name)
	cq := ClusterQueue{
		Name: obj.Name, Cohort: string(obj.Spec.Cohort), Active: status.Inactive == "", Inactive: status.Inactive,
		Pending: s.Queues.PendingInClusterQueue(obj.Name), Admitted: status.Reserving, WeightedShare: status.WeightedShare,
		Quota: quotaBars(obj, status), PendingList: []Pending{}, AdmittedList: []Admitted{},
	}
	if order, ok := s.Queues.Pending(obj.Name); ok {
		// The order its cycles try, as the visibility API shows it (the
		// LocalQueues' turns under admission fair sharing).
		if s.Order != nil {
			order = s.Order(obj.Name, order)
		} else {
			order = scheduler.InAdmissionOrder(s.Cache, obj.Name, order)
		}
		for _, p := range order.Page(0, listed, func(w *core.Workload) bool { return visible(may, w.Key) }) {
			cq.PendingList = append(cq.PendingList, Pending{
				Workload: p.Workload.Key, LocalQueue: p.Workload.Queue, Priority: p.Workload.Priority,
				InClusterQueue: p.InClusterQueue, InLocalQueue: p.InLocalQueue, Reason: s.reason(p.Workload.Key),
				Waiting: now.Sub(p.Workload.Created).Round(time.Second).String(),
			})
		}
	}
	for _, wl := range s.Cache.Admitted(obj.Name, listed) {
		if !visible(may, wl.Key) {
			cq.Hidden++
			continue
		}
		cq.AdmittedList = append(cq.AdmittedList, Admitted{Workload: wl.Key, LocalQueue: wl.Queue, Flavors: flavorsOf(wl.Admission),
			Since: now.Sub(wl.AdmittedAt).Round(time.Second).String()})
	}
	return cq
}

func (s Source) reason(key string) string {
	if s.Reason == nil {
		return ""
	}
	return s.Reason(key)
}

// quotaBars are the queue's flavors and resources: nominal from the spec,
// reserved and borrowed from the scheduler's cache (live, not the status
// written up to a second later).
func quotaBars(obj *musterv1beta1.ClusterQueue, st quota.QueueStatus) []Resource {
	var out []Resource
	for _, rg := range obj.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			for _, rq := range fq.Resources {
				fr := core.FlavorResource{Flavor: string(fq.Name), Resource: string(rq.Name)}
				reserved := core.Quantity(fr.Resource, st.Usage[fr])
				borrowed := core.Quantity(fr.Resource, st.Borrowed[fr])
				pct := 0.0
				if n := rq.NominalQuota.AsApproximateFloat64(); n > 0 {
					pct = 100 * reserved.AsApproximateFloat64() / n
				}
				out = append(out, Resource{Flavor: fr.Flavor, Resource: fr.Resource, Nominal: rq.NominalQuota.String(),
					Reserved: reserved.String(), Borrowed: borrowed.String(), Percent: pct})
			}
		}
	}
	return out
}

func flavorsOf(a *core.Admission) string {
	if a == nil {
		return ""
	}
	set := map[string]bool{}
	for _, ps := range a.PodSets {
		for _, f := range ps.Flavors {
			set[f] = true
		}
	}
	names := make([]string, 0, len(set))
	for f := range set {
		names = append(names, f)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
