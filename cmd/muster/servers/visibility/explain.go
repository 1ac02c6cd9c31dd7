package visibility

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/queue"
	"github.com/musterhq/muster/internal/core/scheduler"
)

// explanation serves namespaces/<ns>/workloads/<name>/explanation: the
// scheduler's last reason for a pending workload and its own search (flavor
// assignment, preemption) run for it on a fresh snapshot.
type explanation struct{ src Source }

var (
	_ rest.Getter = &explanation{}
	_ rest.Scoper = &explanation{}
)

func (*explanation) New() runtime.Object {
	return &visibilityv1beta1.WorkloadExplanation{}
}
func (*explanation) Destroy()              {}
func (*explanation) NamespaceScoped() bool { return true }

func (e *explanation) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if err := e.src.ready(); err != nil {
		return nil, err
	}
	namespace, _ := genericapirequest.NamespaceFrom(ctx)
	wl, cq, ok := e.src.Queues.Lookup(namespace + "/" + name)
	if !ok {
		return nil, notPending(namespace, name)
	}
	out := &visibilityv1beta1.WorkloadExplanation{
		ObjectMeta:     metav1.ObjectMeta{Name: wl.Name, Namespace: wl.Namespace, CreationTimestamp: metav1.NewTime(wl.Created)},
		ClusterQueue:   cq,
		LocalQueueName: wl.Queue,
		Reason:         e.src.reasonOf(wl.Key),
	}
	e.position(out, wl, cq)
	if cq == "" || e.src.Cache == nil {
		return out, nil
	}
	s := scheduler.NewSnapshot(e.src.Cache, e.src.Policy)
	s.SetNow(e.src.now())
	if x, ok := scheduler.Explain(s, cq, wl); ok {
		out.Fit = fitOf(x.Fit)
		out.Shortages = shortages(x.NoFit)
		out.Preemption = preemption(x)
	}
	return out, nil
}

// notPending is the 404 of a workload the scheduler does not hold as
// pending: it explains only what waits.
func notPending(namespace, name string) error {
	err := apierrors.NewNotFound(visibilityv1beta1.Resource("workloads"), name)
	err.ErrStatus.Message = fmt.Sprintf("workload %s/%s is not pending in Muster's queues: it holds quota, has finished or is deactivated, "+
		"names no queue, or does not exist", namespace, name)
	return err
}

// position fills in where the workload is in its queues.
func (e *explanation) position(out *visibilityv1beta1.WorkloadExplanation, wl *core.Workload, cq string) {
	var page []queue.Position
	if cq == "" {
		page = queue.NewPendingOrder(e.src.Queues.WaitingForClusterQueue(wl.Namespace, wl.Queue)).Page(0, maxInt, isKey(wl.Key))
	} else if order, ok := e.src.pending(cq); ok {
		page = order.Page(0, 1, isKey(wl.Key))
	}
	if len(page) == 0 {
		return
	}
	out.PositionInLocalQueue = int32(page[0].InLocalQueue)
	if cq != "" {
		in := int32(page[0].InClusterQueue)
		out.PositionInClusterQueue = &in
	}
}

func isKey(key string) func(*core.Workload) bool {
	return func(w *core.Workload) bool { return w.Key == key }
}

func fitOf(m scheduler.FitMode) visibilityv1beta1.Fit {
	switch m {
	case scheduler.Fit:
		return visibilityv1beta1.FitFits
	case scheduler.FitBorrow:
		return visibilityv1beta1.FitByBorrowing
	case scheduler.FitPreempt:
		return visibilityv1beta1.FitByPreempting
	}
	return visibilityv1beta1.FitNone
}

// shortages are the NoFit's reasons, one per rejected flavor.
func shortages(n *core.NoFit) []visibilityv1beta1.Shortage {
	if n == nil {
		return nil
	}
	out := make([]visibilityv1beta1.Shortage, 0, len(n.Reasons))
	for _, r := range n.Reasons {
		sh := visibilityv1beta1.Shortage{PodSet: n.PodSet, Flavor: r.Flavor, Resource: r.Resource, Never: r.Never || n.Never && r.Resource == "",
			Message: r.String()}
		if r.Text == "" {
			sh.Requested, sh.Available, sh.Quota = quantity(r.Resource, r.Need), quantity(r.Resource, r.Available), quantity(r.Resource, r.Quota)
		}
		out = append(out, sh)
	}
	return out
}

func quantity(res string, amount int64) *resource.Quantity {
	q := core.Quantity(res, amount)
	return &q
}

// preemption says what the search found, and what stands in the way when
// it found nothing.
func preemption(x scheduler.Explanation) *visibilityv1beta1.PreemptionExplanation {
	switch {
	case x.Fit == scheduler.Fit || x.Fit == scheduler.FitBorrow:
		return &visibilityv1beta1.PreemptionExplanation{State: visibilityv1beta1.PreemptionNotNeeded, Message: "it fits without preempting"}
	case len(x.WaitFor) > 0:
		p := &visibilityv1beta1.PreemptionExplanation{State: visibilityv1beta1.PreemptionWaitingForEvictions,
			Message: fmt.Sprintf("%d workload(s) already being evicted free enough: it waits for them to leave", len(x.WaitFor))}
		for _, w := range x.WaitFor {
			p.Victims = append(p.Victims, victim(w, clusterQueueOf(w), ""))
		}
		return p
	case len(x.Victims) > 0:
		p := &visibilityv1beta1.PreemptionExplanation{State: visibilityv1beta1.PreemptionWouldEvict,
			Message: fmt.Sprintf("preemption would evict %d workload(s)", len(x.Victims))}
		if x.PreemptionWait > 0 {
			p.Message += fmt.Sprintf(", after holding its room %s longer in case enough frees by itself (waitForPreemption)", x.PreemptionWait.Round(time.Second))
		}
		p.Victims = victims(x.Victims)
		return p
	case len(x.Protected) > 0:
		return &visibilityv1beta1.PreemptionExplanation{State: visibilityv1beta1.PreemptionAfterMinimumRuntime, Victims: victims(x.Protected),
			Message: fmt.Sprintf("preemption would evict %d workload(s) once they have run their minimum runtime, the first in %s",
				len(x.Protected), x.ProtectedFor.Round(time.Second))}
	}
	return &visibilityv1beta1.PreemptionExplanation{State: visibilityv1beta1.PreemptionCannotHelp, Message: cannotHelp(x)}
}

// cannotHelp says why preemption finds no victims.
func cannotHelp(x scheduler.Explanation) string {
	switch {
	case x.NoFit != nil && x.NoFit.Never:
		return "waiting cannot help either: it asks more than its ClusterQueue can ever give (see shortages)"
	case x.NeverPreempts:
		return "its ClusterQueue never preempts (preemption: withinClusterQueue, reclaimWithinCohort and borrowWithinCohort are Never)"
	case x.Fit == scheduler.Unfit:
		return "even evicting every workload its ClusterQueue's preemption policy allows would not make room: it waits for admitted workloads to finish"
	case x.Allowed == 0 && x.Candidates > 0:
		return fmt.Sprintf("none of the %d admitted workload(s) holding what it lacks may be preempted by it (their priority, or the queues' preemption policies): it waits for them to finish",
			x.Candidates)
	}
	return fmt.Sprintf("the %d workload(s) it may preempt of the %d holding what it lacks free too little: it waits for admitted workloads to finish", x.Allowed, x.Candidates)
}

func victims(vs []scheduler.Victim) []visibilityv1beta1.PreemptionVictim {
	out := make([]visibilityv1beta1.PreemptionVictim, 0, len(vs))
	for _, v := range vs {
		out = append(out, victim(v.Workload, v.Queue, string(v.Reason)))
	}
	return out
}

func victim(w *core.Workload, cq, reason string) visibilityv1beta1.PreemptionVictim {
	return visibilityv1beta1.PreemptionVictim{Name: w.Name, Namespace: w.Namespace, ClusterQueue: cq, Priority: w.Priority, Reason: reason}
}

func clusterQueueOf(w *core.Workload) string {
	if w.Admission == nil {
		return ""
	}
	return w.Admission.ClusterQueue
}
