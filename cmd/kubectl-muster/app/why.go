package app

import (
	"context"
	"fmt"
	"io"
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
	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/podrequests"
	"github.com/musterhq/muster/internal/workload"
)

func newWhyCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "why (KIND/NAME | WORKLOAD)",
		Short: "Say why a job waits: its position, what it lacks per flavor, and what the scheduler's preemption search would evict for it",
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
// controls (found among the Workloads of its namespace).
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
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("finding the Workload of %s/%s needs to list Workloads in namespace %s, which you may not "+
				"(kubectl auth can-i list workloads.muster.dev -n %s); name the Workload instead (kubectl muster why workload/NAME), "+
				"or ask for the batch-user role: %w", kind, name, ns, ns, err)
		}
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
	// answer is the scheduler's own: its last reason, the workload's
	// position, and its flavor assignment and preemption search run now
	// (nil: unknown, and answerErr says why).
	answer    *visibilityv1beta1.WorkloadExplanation
	answerErr error
}

// gather reads the queues and the scheduler's answer. What cannot be read
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
		e.answer, e.answerErr = explanationOf(ctx, o, e.wl.Namespace, e.wl.Name)
		if e.answerErr != nil {
			e.answer = nil
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
		writeChecks(w, wl)
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
	writeAsks(out, wl)
	if e.cq != nil {
		e.writeQuota(out, requestsOf(wl))
	} else {
		fmt.Fprintln(out, "\nThe ClusterQueue cannot be read (it does not exist, or you may not get it): its quota is not shown.")
	}
	e.writeSearch(out)
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
	x := e.answer
	switch {
	case x == nil && e.answerErr != nil:
		return "unknown (" + answerError(e.answerErr) + ")"
	case x.PositionInClusterQueue == nil:
		return fmt.Sprintf("%d in its LocalQueue, in no ClusterQueue yet", x.PositionInLocalQueue)
	}
	return fmt.Sprintf("%d in the ClusterQueue, %d in the LocalQueue (0 is next)", *x.PositionInClusterQueue, x.PositionInLocalQueue)
}

// answerError says why the scheduler's answer could not be had.
func answerError(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "you may not ask the scheduler: kubectl auth can-i get workloads.visibility.muster.dev --subresource explanation; the batch-user role grants it"
	case apierrors.IsNotFound(err):
		return "the scheduler does not hold it as pending: it was just admitted or changed, or Muster has not seen it yet"
	}
	return "visibility API: " + err.Error()
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
	if e.answer != nil && e.answer.Reason != "" {
		return e.answer.Reason
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

// writeQuota prints the ClusterQueue's quota for the resources asked, as
// its status has it: context for the scheduler's answer, which is what
// decides.
func (e *explanation) writeQuota(out io.Writer, asks corev1.ResourceList) {
	fmt.Fprintf(out, "\nQuota of ClusterQueue %s (its status, without borrowing):\n", e.cq.Name)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  FLAVOR\tRESOURCE\tNOMINAL\tRESERVED\tFREE\tASKED")
	for _, r := range quotaRows(e.cq, asks) {
		free := r.nominal.DeepCopy()
		free.Sub(r.reserved)
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\n", r.flavor, r.resource, r.nominal.String(), r.reserved.String(), free.String(), r.asked.String())
	}
	_ = w.Flush()
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

// writeSearch prints what the scheduler's search found for the workload
// now: how it fits, what is short per flavor, and what preemption would
// evict or why it cannot help.
func (e *explanation) writeSearch(out io.Writer) {
	defer e.writeAhead(out)
	x := e.answer
	if x == nil {
		fmt.Fprintf(out, "\nThe scheduler's search is not shown: %s.\n", answerError(e.answerErr))
		return
	}
	if x.ClusterQueue == "" {
		fmt.Fprintln(out, "\nIt is in no ClusterQueue: it waits for its LocalQueue and that queue's ClusterQueue to exist (reason above).")
		return
	}
	fmt.Fprintf(out, "\nThe scheduler's search, run now: %s.\n", fitWords(x.Fit))
	if len(x.Shortages) > 0 {
		fmt.Fprintf(out, "Short, for pod set %s:\n", x.Shortages[0].PodSet)
		for _, sh := range x.Shortages {
			fmt.Fprintf(out, "  %s\n", sh.Message)
		}
	}
	if x.Fit == visibilityv1beta1.FitFits || x.Fit == visibilityv1beta1.FitByBorrowing {
		e.writeFits(out)
		return
	}
	if p := x.Preemption; p != nil {
		fmt.Fprintf(out, "Preemption: %s", strings.TrimPrefix(p.Message, "preemption "))
		if len(p.Victims) == 0 {
			fmt.Fprintln(out, ".")
			return
		}
		fmt.Fprintln(out, ":")
		for _, v := range p.Victims {
			fmt.Fprintf(out, "  %s/%s (ClusterQueue %s, priority %d%s)\n", v.Namespace, v.Name, v.ClusterQueue, v.Priority, prefixed(", ", v.Reason))
		}
	}
}

// writeFits says why a workload that fits now still waits.
func (e *explanation) writeFits(out io.Writer) {
	if strings.HasPrefix(e.reason(), core.BehindStarvingPrefix) {
		fmt.Fprintln(out, "That room is held for a starving workload (reason above): it waits until that one is admitted, unless its maximum execution time ends soon enough to backfill.")
		return
	}
	fmt.Fprintln(out, "It waits for its turn (position above) or for the next cycle, not for quota.")
}

func fitWords(f visibilityv1beta1.Fit) string {
	switch f {
	case visibilityv1beta1.FitFits:
		return "it fits the quota free now"
	case visibilityv1beta1.FitByBorrowing:
		return "it fits by borrowing from the cohort"
	case visibilityv1beta1.FitByPreempting:
		return "it fits only by preempting"
	}
	return "it does not fit, even by preempting"
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// writeAhead says how many wait ahead of the workload in its ClusterQueue.
func (e *explanation) writeAhead(out io.Writer) {
	x := e.answer
	if x == nil || x.PositionInClusterQueue == nil || *x.PositionInClusterQueue <= 0 {
		return
	}
	fmt.Fprintf(out, "\n%d workload(s) wait ahead of it in ClusterQueue %s and are tried first (kubectl muster list workloads -A).\n",
		*x.PositionInClusterQueue, x.ClusterQueue)
}

// writeChecks says where the workload stands with each admission check of
// its reservation, and what it waits for while not admitted.
func writeChecks(w io.Writer, wl *musterv1beta1.Workload) {
	for _, c := range wl.Status.AdmissionChecks {
		fmt.Fprintf(w, "Check %s:\t%s: %s\n", c.Name, c.State, orDash(c.Message))
	}
	switch {
	case wl.Status.ClusterName != "":
		fmt.Fprintf(w, "Runs in:\tworker cluster %s (its job's status there is mirrored onto this one's)\n", wl.Status.ClusterName)
	case len(wl.Status.NominatedClusterNames) > 0:
		fmt.Fprintf(w, "Sent to:\tworker clusters %s; the first whose Muster admits it runs it\n", strings.Join(wl.Status.NominatedClusterNames, ", "))
	}
	if len(wl.Status.AdmissionChecks) == 0 || workload.IsAdmitted(wl) || !workload.HoldsQuota(wl) || workload.IsEvicted(wl) {
		return
	}
	switch {
	case !workload.ChecksReady(wl):
		fmt.Fprintf(w, "Waiting:\tfor its admission checks to be Ready; the job starts then\n")
	case workload.PlacementDelayed(wl):
		fmt.Fprintf(w, "Waiting:\tfor the nodes its checks provisioned to be placed on\n")
	}
}
