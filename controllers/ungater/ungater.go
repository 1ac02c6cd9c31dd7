// Package ungater sends the pods of a workload admitted with a topology
// placement where the admission promised: each pod waits at the
// muster.dev/topology scheduling gate until the ungater gives it a node of
// the placement (a kubernetes.io/hostname node selector) and removes the
// gate. It decides nothing: the placement is the scheduler's, in the
// Workload's status; the ungater only counts which nodes still owe pods.
package ungater

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
)

// WorkloadIndex indexes pods by the Workload their annotation names.
const WorkloadIndex = "muster.dev/workload"

// patchers bounds the pod patches in flight per workload: a 1,000-pod set
// is released in batches, not one write at a time.
const patchers = 16

// Ungater reconciles one Workload's gated pods.
type Ungater struct {
	client client.Client
	// sent remembers, per pod UID, the node a patch gave it until the
	// cache shows the pod ungated, so a reconcile on a stale cache never
	// sends two pods to one slot.
	mu   sync.Mutex
	sent map[types.UID]string
}

// New returns an ungater.
func New(c client.Client) *Ungater { return &Ungater{client: c, sent: map[types.UID]string{}} }

// Reconcile ungates what the workload's placement still owes pods.
func (u *Ungater) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl musterv1beta1.Workload
	if err := u.client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !workload.IsAdmitted(&wl) {
		// Not yet (its admission checks) or no longer (its job is being
		// stopped; its pods go).
		return ctrl.Result{}, nil
	}
	var pods corev1.PodList
	if err := u.client.List(ctx, &pods, client.InNamespace(wl.Namespace), client.MatchingFields{WorkloadIndex: wl.Name}); err != nil {
		return ctrl.Result{}, err
	}
	pending := false
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if psa.TopologyAssignment == nil {
			continue
		}
		more, err := u.ungatePodSet(ctx, &wl, psa, podsOf(pods.Items, psa.Name))
		if err != nil {
			return ctrl.Result{}, err
		}
		pending = pending || more
	}
	if pending {
		// Patches not yet seen by the cache: look again shortly.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, nil
}

// podsOf lists a pod set's pods that still run or may run.
func podsOf(pods []corev1.Pod, podSet string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.Labels[musterv1beta1.PodSetLabel] != podSet || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out
}

// ungatePodSet gives gated pods the nodes that still owe pods: a numbered
// pod the slot its number names in placement order, so that neighbouring
// ranks share racks and a sub-group's pods fill one slice however the pods
// arrive, the others the first free slots. It reports whether patches are
// still unconfirmed.
func (u *Ungater) ungatePodSet(ctx context.Context, wl *musterv1beta1.Workload, psa musterv1beta1.PodSetAssignment, pods []*corev1.Pod) (bool, error) {
	slots, hosts, err := u.slots(ctx, psa.TopologyAssignment)
	if err != nil {
		return false, err
	}
	var gated []*corev1.Pod
	unconfirmed := false
	for _, p := range pods {
		node, isSent := u.sentTo(p)
		switch {
		case isGated(p) && isSent:
			unconfirmed = true
			slots.take(node)
		case isGated(p):
			gated = append(gated, p)
		default:
			u.confirm(p)
			slots.take(hosts.node(p.Spec.NodeSelector[corev1.LabelHostname]))
		}
	}
	plan := planUngates(gated, numberingOf(wl, psa.Name), slots, hosts)
	if len(plan) == 0 {
		return unconfirmed, nil
	}
	log.FromContext(ctx).V(2).Info("Ungating pods", "workload", klog.KObj(wl), "podSet", psa.Name, "pods", len(plan))
	return true, u.patchAll(ctx, plan)
}

type ungate struct {
	pod        *corev1.Pod
	node, host string
}

// patchAll removes the gate and sets the node of each planned pod, in
// parallel batches. A pod that went away meanwhile is skipped.
func (u *Ungater) patchAll(ctx context.Context, plan []ungate) error {
	errs := make(chan error, len(plan))
	sem := make(chan struct{}, patchers)
	var wg sync.WaitGroup
	for _, g := range plan {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := u.patch(ctx, g); err != nil && !apierrors.IsNotFound(err) {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}

func (u *Ungater) patch(ctx context.Context, g ungate) error {
	p := g.pod.DeepCopy()
	base := client.MergeFrom(g.pod)
	if p.Spec.NodeSelector == nil {
		p.Spec.NodeSelector = map[string]string{}
	}
	p.Spec.NodeSelector[corev1.LabelHostname] = g.host
	p.Spec.SchedulingGates = slices.DeleteFunc(p.Spec.SchedulingGates, isNodeGate)
	if len(p.Spec.SchedulingGates) == 0 {
		p.Spec.SchedulingGates = nil
	}
	if err := u.client.Patch(ctx, p, base); err != nil {
		return err
	}
	u.mu.Lock()
	u.sent[p.UID] = g.node
	u.mu.Unlock()
	return nil
}

func (u *Ungater) sentTo(p *corev1.Pod) (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	n, ok := u.sent[p.UID]
	return n, ok
}

func (u *Ungater) confirm(p *corev1.Pod) {
	u.mu.Lock()
	delete(u.sent, p.UID)
	u.mu.Unlock()
}

// isGated reports whether a placed pod waits for its node: at the
// topology gate, or, a plain Pod (which cannot take a new gate once
// created), still at the admission gate its admission left on it.
func isGated(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, isNodeGate)
}

// isNodeGate is a gate the ungater lifts from a pod of a placed workload.
func isNodeGate(s corev1.PodSchedulingGate) bool {
	return s.Name == musterv1beta1.TopologySchedulingGate || s.Name == musterv1beta1.AdmissionSchedulingGate
}

// numbering says how a pod set's pods are numbered: by index within
// sub-groups of perGroup pods (a JobSet's child Jobs), or by index alone.
type numbering struct {
	subGroupLabel, indexLabel string
	perGroup                  int
}

// numberingOf reads the pod set's numbering from its topology request.
func numberingOf(wl *musterv1beta1.Workload, podSet string) numbering {
	for _, ps := range wl.Spec.PodSets {
		if ps.Name != podSet || ps.TopologyRequest == nil {
			continue
		}
		tr := ps.TopologyRequest
		n := numbering{indexLabel: ptr.Deref(tr.PodIndexLabel, "")}
		if groups := ptr.Deref(tr.SubGroupCount, 0); tr.SubGroupIndexLabel != nil && groups > 0 && ps.Count%groups == 0 {
			n.subGroupLabel, n.perGroup = *tr.SubGroupIndexLabel, int(ps.Count/groups)
		}
		return n
	}
	return numbering{}
}

// position is a pod's place in its pod set (its slot in placement order),
// or -1 when it is not numbered.
func (n numbering) position(p *corev1.Pod) int {
	index := podIndex(p, n.indexLabel)
	if index < 0 || n.subGroupLabel == "" {
		return index
	}
	group := podIndex(p, n.subGroupLabel)
	if group < 0 || index >= n.perGroup {
		return -1
	}
	return group*n.perGroup + index
}

// planUngates gives each numbered pod the slot of its position while that
// slot's node still owes pods, then every other pod, lowest position
// first, the first node still owed one; pods beyond the placement stay
// gated.
func planUngates(gated []*corev1.Pod, n numbering, slots *slotList, hosts hostMap) []ungate {
	sortByIndex(gated, n)
	var plan, rest []ungate
	for _, p := range gated {
		if node := slots.at(n.position(p)); node != "" {
			plan = append(plan, ungate{pod: p, node: node, host: hosts.host(node)})
		} else {
			rest = append(rest, ungate{pod: p})
		}
	}
	for _, g := range rest {
		if g.node = slots.next(); g.node == "" {
			break
		}
		g.host = hosts.host(g.node)
		plan = append(plan, g)
	}
	return plan
}

// podIndex is a pod's index under label (a label, or an annotation of the
// same name), -1 when it has no usable one.
func podIndex(p *corev1.Pod, label string) int {
	if label == "" {
		return -1
	}
	v, ok := p.Labels[label]
	if !ok {
		v, ok = p.Annotations[label]
	}
	n, err := strconv.Atoi(v)
	if !ok || err != nil || n < 0 {
		return -1
	}
	return n
}

// compareIndexes orders two indexes, a missing one (-1) last.
func compareIndexes(a, b int) int {
	switch {
	case a == b:
		return 0
	case a >= 0 && b >= 0:
		return cmp.Compare(a, b)
	}
	return cmp.Compare(b, a) // the one with an index first
}

// sortByIndex orders pods by their sub-group index, then their index, then
// name: pods without a usable index go after those with one.
func sortByIndex(pods []*corev1.Pod, n numbering) {
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		if c := compareIndexes(podIndex(a, n.subGroupLabel), podIndex(b, n.subGroupLabel)); c != 0 {
			return c
		}
		if c := compareIndexes(podIndex(a, n.indexLabel), podIndex(b, n.indexLabel)); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}

// SetupWithManager registers the ungater and the pod index it lists by.
func (u *Ungater) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, WorkloadIndex, func(o client.Object) []string {
		if name := o.GetAnnotations()[musterv1beta1.WorkloadAnnotation]; name != "" {
			return []string{name}
		}
		return nil
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("topology-ungater").
		For(&musterv1beta1.Workload{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			name := o.GetAnnotations()[musterv1beta1.WorkloadAnnotation]
			if name == "" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
		})).
		Complete(u)
}
