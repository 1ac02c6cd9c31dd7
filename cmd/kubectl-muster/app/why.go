package app

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/podrequests"
	"github.com/musterhq/muster/internal/workload"
)

func newWhyCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "why (KIND/NAME | WORKLOAD)",
		Short: "Say why a job waits: its position, what it lacks per flavor, and what must finish for it to run",
		Example: `  kubectl muster why job/train -n team-a
  kubectl muster why pytorchjob/bert
  kubectl muster why workload/job-train-5c2d1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, ok := strings.Cut(args[0], "/")
			if !ok {
				kind, name = "workload", args[0]
			}
			kind = strings.ToLower(kind)
			if name == "" || (!isWorkloadKind(kind) && !jobKinds[kind]) {
				return usageError(cmd, "want KIND/NAME with KIND one of workload, job, pytorchjob, raycluster; got %q", args[0])
			}
			return o.why(cmd.Context(), kind, name)
		},
	}
}

var jobKinds = map[string]bool{"job": true, "pytorchjob": true, "raycluster": true}

func isWorkloadKind(k string) bool { return k == "workload" || k == "workloads" || k == "wl" }

func (o *Options) why(ctx context.Context, kind, name string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	ns, err := o.Namespace()
	if err != nil {
		return err
	}
	wl, err := findWorkload(ctx, c, ns, kind, name)
	if err != nil {
		return err
	}
	e := explanation{wl: wl, now: o.Clock.Now()}
	e.gather(ctx, c, o)
	return e.write(o.Out)
}

// findWorkload is the Workload itself, or the one a job of that kind
// controls.
func findWorkload(ctx context.Context, c client.Client, ns, kind, name string) (*musterv1beta1.Workload, error) {
	if isWorkloadKind(kind) {
		var wl musterv1beta1.Workload
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &wl); err != nil {
			return nil, err
		}
		return &wl, nil
	}
	var list musterv1beta1.WorkloadList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].OwnerReferences {
			if strings.EqualFold(ref.Kind, kind) && ref.Name == name {
				return &list.Items[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no Workload for %s/%s in namespace %s: is it submitted to a queue (label muster.dev/queue-name), and is Muster running? "+
		"A Warning event %s on it says why its Workload could not be made (kubectl describe %s %s -n %s)", kind, name, ns, "ErrWorkloadCompose", kind, name, ns)
}

// explanation is what why says, gathered from the API.
type explanation struct {
	wl  *musterv1beta1.Workload
	now time.Time
	lq  *musterv1beta1.LocalQueue
	cq  *musterv1beta1.ClusterQueue
	// pos is the workload's place from the visibility API (nil: unknown,
	// and posErr says why).
	pos    *position
	posErr error
	// admitted are the ClusterQueue's workloads holding quota.
	admitted []musterv1beta1.Workload
	// admittedErr says why the admitted workloads are unknown (the user
	// may not list Workloads in every namespace).
	admittedErr error
}

// gather reads the queues and the admitted workloads. What cannot be read
// (a user may see the LocalQueue but not the ClusterQueue) is left out,
// and said so.
func (e *explanation) gather(ctx context.Context, c client.Client, o *Options) {
	var lq musterv1beta1.LocalQueue
	if err := c.Get(ctx, types.NamespacedName{Namespace: e.wl.Namespace, Name: string(e.wl.Spec.QueueName)}, &lq); err == nil {
		e.lq = &lq
	}
	cqName := clusterQueueOf(e.wl)
	if cqName == "-" && e.lq != nil {
		cqName = string(e.lq.Spec.ClusterQueue)
	}
	var cq musterv1beta1.ClusterQueue
	if err := c.Get(ctx, types.NamespacedName{Name: cqName}, &cq); err == nil {
		e.cq = &cq
	}
	if e.pending() {
		got, err := pendingInLocalQueue(ctx, o, e.wl.Namespace, string(e.wl.Spec.QueueName))
		e.posErr = err
		if err == nil {
			for _, it := range got.Items {
				if it.Name == e.wl.Name {
					e.pos = &position{inClusterQueue: it.PositionInClusterQueue, inLocalQueue: it.PositionInLocalQueue, reason: it.Reason}
				}
			}
		}
	}
	if e.cq != nil && e.pending() {
		var all musterv1beta1.WorkloadList
		if err := c.List(ctx, &all); err != nil {
			e.admittedErr = err
		} else {
			for _, w := range all.Items {
				if w.Status.Admission != nil && string(w.Status.Admission.ClusterQueue) == e.cq.Name && !workload.IsFinished(&w) {
					e.admitted = append(e.admitted, w)
				}
			}
		}
	}
}

func (e *explanation) pending() bool {
	return !workload.HasQuotaReservation(e.wl) && !workload.IsFinished(e.wl)
}

func (e *explanation) write(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	wl := e.wl
	fmt.Fprintf(w, "Workload:\t%s/%s (%s)\n", wl.Namespace, wl.Name, ownerOf(wl))
	fmt.Fprintf(w, "Queue:\t%s\n", e.queueLine())
	fmt.Fprintf(w, "Status:\t%s for %s\n", status(wl), age(statusSince(wl), e.now))
	if !workload.IsActive(wl) && e.pending() {
		fmt.Fprintf(w, "Reason:\t%s\n", orDash(conditionMessage(wl)))
		fmt.Fprintf(w, "To run:\treactivate it: kubectl patch workloads.muster.dev %s -n %s --type merge -p '{\"spec\":{\"active\":true}}'\n", wl.Name, wl.Namespace)
		return w.Flush()
	}
	if !e.pending() {
		if wl.Status.Admission != nil {
			fmt.Fprintf(w, "Flavors:\t%s\n", orDash(flavors(wl)))
		}
		return w.Flush()
	}
	fmt.Fprintf(w, "Position:\t%s\n", e.positionLine())
	if share := e.fairShare(); share != "" {
		fmt.Fprintf(w, "Fair share:\t%s\n", share)
	}
	fmt.Fprintf(w, "Reason:\t%s\n", orDash(e.reason()))
	if err := w.Flush(); err != nil {
		return err
	}
	asks := requestsOf(wl)
	writeAsks(out, wl)
	if e.cq == nil {
		_, err := fmt.Fprintln(out, "\nThe ClusterQueue cannot be read (it does not exist, or you may not get it): its quota is not shown.")
		return err
	}
	short := e.writeQuota(out, asks)
	e.writeToRun(out, short)
	return nil
}

func (e *explanation) queueLine() string {
	lq := e.wl.Namespace + "/" + string(e.wl.Spec.QueueName)
	switch {
	case e.lq == nil:
		return "LocalQueue " + lq + " (not found)"
	case e.cq == nil:
		return fmt.Sprintf("LocalQueue %s -> ClusterQueue %s (not readable)", lq, e.lq.Spec.ClusterQueue)
	case e.cq.Spec.Cohort != "":
		return fmt.Sprintf("LocalQueue %s -> ClusterQueue %s in cohort %s", lq, e.cq.Name, e.cq.Spec.Cohort)
	}
	return fmt.Sprintf("LocalQueue %s -> ClusterQueue %s", lq, e.cq.Name)
}

func (e *explanation) positionLine() string {
	switch {
	case e.pos == nil && e.posErr != nil:
		return "unknown (visibility API: " + e.posErr.Error() + ")"
	case e.pos == nil:
		return "unknown (not in the scheduler's queues yet)"
	case e.pos.inClusterQueue < 0:
		return fmt.Sprintf("%d in its LocalQueue, in no ClusterQueue yet", e.pos.inLocalQueue)
	}
	return fmt.Sprintf("%d in the ClusterQueue, %d in the LocalQueue (0 is next)", e.pos.inClusterQueue, e.pos.inLocalQueue)
}

// fairShare is the ClusterQueue's weighted share under fair sharing: the
// cohort admits from the queue with the lowest share first.
func (e *explanation) fairShare() string {
	if e.cq == nil || e.cq.Status.FairSharing == nil {
		return ""
	}
	return fmt.Sprintf("ClusterQueue %s has weighted share %d (0: borrows nothing; the cohort serves the lowest share first)",
		e.cq.Name, e.cq.Status.FairSharing.WeightedShare)
}

// statusSince is when the workload entered the phase status names: the
// last transition of the condition that decides it, else its creation.
func statusSince(wl *musterv1beta1.Workload) metav1.Time {
	cond := map[string]string{
		"Finished": musterv1beta1.WorkloadFinished, "Inactive": musterv1beta1.WorkloadRequeued,
		"Evicting": musterv1beta1.WorkloadEvicted, "Admitted": musterv1beta1.WorkloadAdmitted,
		"QuotaReserved": musterv1beta1.WorkloadQuotaReserved, "Pending": musterv1beta1.WorkloadQuotaReserved,
	}[status(wl)]
	if c := meta.FindStatusCondition(wl.Status.Conditions, cond); c != nil && !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime
	}
	return wl.CreationTimestamp
}

func (e *explanation) reason() string {
	if e.pos != nil && e.pos.reason != "" {
		return e.pos.reason
	}
	return conditionMessage(e.wl)
}

// requestsOf is the workload's total ask per resource.
func requestsOf(wl *musterv1beta1.Workload) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, ps := range wl.Spec.PodSets {
		for name, q := range podrequests.PerPod(&ps.Template.Spec, nil, nil) {
			q.Mul(int64(ps.Count))
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	return total
}

func writeAsks(out io.Writer, wl *musterv1beta1.Workload) {
	fmt.Fprintln(out, "\nAsks for:")
	for _, ps := range wl.Spec.PodSets {
		fmt.Fprintf(out, "  pod set %s: %d x {%s}\n", ps.Name, ps.Count, listOf(podrequests.PerPod(&ps.Template.Spec, nil, nil)))
	}
}

func listOf(rl corev1.ResourceList) string {
	parts := make([]string, 0, len(rl))
	for _, name := range sortedKeys(rl) {
		q := rl[corev1.ResourceName(name)]
		parts = append(parts, name+": "+q.String())
	}
	return strings.Join(parts, ", ")
}

// quotaRow is one flavor and resource of the ClusterQueue.
type quotaRow struct {
	flavor, resource  string
	nominal, reserved resource.Quantity
	asked             resource.Quantity
}

// short is what the workload lacks in the row's flavor (zero if it fits).
func (r quotaRow) short() resource.Quantity {
	free := r.nominal.DeepCopy()
	free.Sub(r.reserved)
	s := r.asked.DeepCopy()
	s.Sub(free)
	if s.Sign() < 0 {
		return resource.Quantity{}
	}
	return s
}

// writeQuota prints the ClusterQueue's quota for the resources asked, and
// returns the rows the workload does not fit in.
func (e *explanation) writeQuota(out io.Writer, asks corev1.ResourceList) []quotaRow {
	rows := quotaRows(e.cq, asks)
	fmt.Fprintf(out, "\nQuota of ClusterQueue %s (nominal, without borrowing):\n", e.cq.Name)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  FLAVOR\tRESOURCE\tNOMINAL\tRESERVED\tFREE\tASKED\tSHORT")
	var short []quotaRow
	for _, r := range rows {
		free := r.nominal.DeepCopy()
		free.Sub(r.reserved)
		s := r.short()
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.flavor, r.resource, r.nominal.String(), r.reserved.String(), free.String(), r.asked.String(), s.String())
		if s.Sign() > 0 {
			short = append(short, r)
		}
	}
	_ = w.Flush()
	return short
}

func quotaRows(cq *musterv1beta1.ClusterQueue, asks corev1.ResourceList) []quotaRow {
	reserved := map[string]resource.Quantity{}
	for _, fu := range cq.Status.FlavorsReservation {
		for _, ru := range fu.Resources {
			reserved[string(fu.Name)+"/"+string(ru.Name)] = ru.Total
		}
	}
	var rows []quotaRow
	for _, rg := range cq.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			for _, rq := range fq.Resources {
				asked, ok := asks[rq.Name]
				if !ok {
					continue
				}
				rows = append(rows, quotaRow{flavor: string(fq.Name), resource: string(rq.Name), nominal: rq.NominalQuota,
					reserved: reserved[string(fq.Name)+"/"+string(rq.Name)], asked: asked})
			}
		}
	}
	return rows
}

// writeToRun says what would let the workload in: per flavor it is short
// in, the admitted workloads whose finishing frees enough (the most
// recently admitted first: what they hold, not which of them preemption
// may take, which depends on priorities, the queues' policies, minimum
// runtimes and borrowing), or that it can never fit in that flavor's
// nominal quota.
func (e *explanation) writeToRun(out io.Writer, short []quotaRow) {
	defer e.writeAhead(out)
	if len(short) == 0 && strings.HasPrefix(e.reason(), core.BehindStarvingPrefix) {
		fmt.Fprintln(out, "\nIt fits the quota the queue has free, but that room is held for a starving workload (reason above): it waits until that one is admitted, unless its maximum execution time ends soon enough to backfill.")
		return
	}
	if len(short) == 0 {
		fmt.Fprintln(out, "\nIt fits the nominal quota: it waits for its turn (position above), for borrowing, or for a placement (topology, gang) rather than for quota.")
		return
	}
	fmt.Fprintln(out, "\nTo run, in one of the flavors it is short in:")
	for _, r := range short {
		if r.asked.Cmp(r.nominal) > 0 {
			fmt.Fprintf(out, "  %s: never within nominal quota (asks %s %s of %s); only borrowing from the cohort can admit it\n", r.flavor, r.asked.String(), r.resource, r.nominal.String())
			continue
		}
		s := r.short()
		if e.admittedErr != nil {
			fmt.Fprintf(out, "  %s: %s %s more must free up; which admitted workloads hold it is not shown: %s\n", r.flavor, s.String(), r.resource, listError(e.admittedErr))
			continue
		}
		victims, freed := toFinish(e.admitted, r)
		if freed.Cmp(s) < 0 {
			fmt.Fprintf(out, "  %s: %s %s more must free up; the admitted workloads of this queue hold only %s of it\n", r.flavor, s.String(), r.resource, freed.String())
			continue
		}
		fmt.Fprintf(out, "  %s: %s %s must free up: %s finishing frees %s\n", r.flavor, s.String(), r.resource, strings.Join(victims, ", "), freed.String())
	}
}

// listError says why the admitted workloads could not be listed.
func listError(err error) string {
	if apierrors.IsForbidden(err) {
		return "you may not list Workloads in every namespace (kubectl auth can-i list workloads.muster.dev -A)"
	}
	return err.Error()
}

// writeAhead says how many wait ahead of the workload in its ClusterQueue.
func (e *explanation) writeAhead(out io.Writer) {
	if e.pos == nil || e.pos.inClusterQueue <= 0 {
		return
	}
	fmt.Fprintf(out, "\n%d workload(s) wait ahead of it in ClusterQueue %s and are tried first (kubectl muster list workloads -A).\n",
		e.pos.inClusterQueue, e.cq.Name)
}

// toFinish picks admitted workloads, most recently admitted first, until
// they free the row's shortfall; it returns their names and what they free.
func toFinish(admitted []musterv1beta1.Workload, r quotaRow) ([]string, resource.Quantity) {
	type use struct {
		name string
		at   time.Time
		q    resource.Quantity
	}
	var uses []use
	for i := range admitted {
		wl := &admitted[i]
		q := usageIn(wl, r.flavor, corev1.ResourceName(r.resource))
		if q.Sign() > 0 {
			uses = append(uses, use{name: wl.Namespace + "/" + wl.Name, at: workload.ReservedAt(wl), q: q})
		}
	}
	slices.SortFunc(uses, func(a, b use) int { return b.at.Compare(a.at) })
	need := r.short()
	var names []string
	freed := resource.Quantity{}
	for _, u := range uses {
		if freed.Cmp(need) >= 0 {
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", u.name, u.q.String()))
		freed.Add(u.q)
	}
	return names, freed
}

// usageIn is what an admitted workload holds of a resource in a flavor.
func usageIn(wl *musterv1beta1.Workload, flavor string, res corev1.ResourceName) resource.Quantity {
	total := resource.Quantity{}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if string(psa.Flavors[res]) != flavor {
			continue
		}
		if q, ok := psa.ResourceUsage[res]; ok {
			total.Add(q)
		}
	}
	return total
}
