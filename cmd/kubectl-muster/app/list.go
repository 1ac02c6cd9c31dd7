package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
)

// listOptions are the flags of list.
type listOptions struct {
	*Options
	printer       *printFlags
	allNamespaces bool
	selector      string
}

func newListCommand(o *Options) *cobra.Command {
	l := &listOptions{Options: o, printer: newPrintFlags()}
	cmd := &cobra.Command{
		Use:   "list (workloads|clusterqueues|localqueues)",
		Short: "List workloads with their queue positions, or the queues with their counts",
		Example: `  kubectl muster list workloads -A
  kubectl muster list workloads -n team-a -o wide
  kubectl muster list clusterqueues
  kubectl muster list localqueues -A -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run, ok := map[string]func(context.Context) error{
				"workloads": l.workloads, "workload": l.workloads, "wl": l.workloads,
				"clusterqueues": l.clusterQueues, "clusterqueue": l.clusterQueues, "cq": l.clusterQueues,
				"localqueues": l.localQueues, "localqueue": l.localQueues, "lq": l.localQueues,
			}[args[0]]
			if !ok {
				return usageError(cmd, "unknown kind %q: want workloads, clusterqueues or localqueues", args[0])
			}
			if err := l.printer.validate(); err != nil {
				return usageError(cmd, "%v", err)
			}
			if _, err := labels.Parse(l.selector); err != nil {
				return usageError(cmd, "invalid selector %q: %v", l.selector, err)
			}
			return run(cmd.Context())
		},
	}
	cmd.Flags().BoolVarP(&l.allNamespaces, "all-namespaces", "A", false, "List across all namespaces.")
	cmd.Flags().StringVarP(&l.selector, "selector", "l", "", "Label selector, as kubectl's -l.")
	l.printer.addFlags(cmd)
	return cmd
}

// fetch lists objects in the flags' scope (the namespace, or all with
// -A, for namespaced kinds; the label selector) into list.
func (l *listOptions) fetch(ctx context.Context, list client.ObjectList, namespaced bool) (client.Client, error) {
	c, err := l.Client()
	if err != nil {
		return nil, err
	}
	opts, err := l.listOpts(namespaced)
	if err != nil {
		return nil, err
	}
	return c, c.List(ctx, list, opts...)
}

// listOpts are the client's list options for the flags.
func (l *listOptions) listOpts(namespaced bool) ([]client.ListOption, error) {
	sel, err := labels.Parse(l.selector)
	if err != nil {
		return nil, err
	}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
	if namespaced && !l.allNamespaces {
		ns, err := l.Namespace()
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.InNamespace(ns))
	}
	return opts, nil
}

func (l *listOptions) workloads(ctx context.Context) error {
	var list musterv1beta1.WorkloadList
	c, err := l.fetch(ctx, &list, true)
	if err != nil {
		return err
	}
	sortByNamespaceAndName(list.Items, func(w *musterv1beta1.Workload) metav1.Object { return w })
	if l.printer.structured() {
		return l.printer.print(&list, l.Out)
	}
	positions := l.positions(ctx, c, list.Items)
	queues := l.clusterQueuesOfLocalQueues(ctx, c)
	return l.printer.printTable(workloadTable(list.Items, positions, queues, l.Clock.Now()), l.allNamespaces, l.Out)
}

// clusterQueuesOfLocalQueues maps namespace/name of the LocalQueues in
// scope to their ClusterQueue, for the pending workloads' column (empty if
// the user may not list them).
func (l *listOptions) clusterQueuesOfLocalQueues(ctx context.Context, c client.Client) map[string]string {
	out := map[string]string{}
	var scope []client.ListOption // the workloads' namespaces, any labels
	if !l.allNamespaces {
		ns, err := l.Namespace()
		if err != nil {
			return out
		}
		scope = append(scope, client.InNamespace(ns))
	}
	var lqs musterv1beta1.LocalQueueList
	if err := c.List(ctx, &lqs, scope...); err != nil {
		return out
	}
	for _, lq := range lqs.Items {
		out[lq.Namespace+"/"+lq.Name] = string(lq.Spec.ClusterQueue)
	}
	return out
}

// positions asks the visibility API where each pending workload stands,
// per LocalQueue (what a namespace's users may read). Where it cannot
// answer, the position is unknown and a warning says why.
func (l *listOptions) positions(ctx context.Context, c client.Client, wls []musterv1beta1.Workload) map[string]position {
	out := map[string]position{}
	asked := map[string]bool{}
	for i := range wls {
		wl := &wls[i]
		lq := wl.Namespace + "/" + string(wl.Spec.QueueName)
		if workload.HasQuotaReservation(wl) || workload.IsFinished(wl) || asked[lq] {
			continue
		}
		asked[lq] = true
		got, err := pendingInLocalQueue(ctx, l.Options, wl.Namespace, string(wl.Spec.QueueName))
		if err != nil {
			if apierrors.IsNotFound(err) && !apierrors.HasStatusCause(err, metav1.CauseTypeUnexpectedServerResponse) {
				continue // the LocalQueue is gone: its workloads have no position
			}
			fmt.Fprintf(l.ErrOut, "Warning: positions in LocalQueue %s unknown: %v\n", lq, err)
			if apierrors.IsServiceUnavailable(err) || apierrors.IsForbidden(err) || isNoAPI(err) {
				// The same answer for every other queue: say it once.
				return out
			}
			continue
		}
		for _, it := range got.Items {
			out[it.Namespace+"/"+it.Name] = position{inClusterQueue: it.PositionInClusterQueue, inLocalQueue: it.PositionInLocalQueue, reason: it.Reason}
		}
	}
	return out
}

// isNoAPI is whether the cluster does not serve visibility.muster.dev
// (no APIService: the request falls through to a 404 of the API server).
func isNoAPI(err error) bool {
	return apierrors.IsNotFound(err) && apierrors.HasStatusCause(err, metav1.CauseTypeUnexpectedServerResponse)
}

// position is a pending workload's place, from the visibility API.
type position struct {
	inClusterQueue, inLocalQueue int32
	reason                       string
}

func workloadTable(wls []musterv1beta1.Workload, positions map[string]position, queues map[string]string, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"},
		{Name: "Job", Type: "string"},
		{Name: "LocalQueue", Type: "string"},
		{Name: "ClusterQueue", Type: "string"},
		{Name: "Status", Type: "string"},
		{Name: "Position", Type: "string", Description: "In the ClusterQueue, then in the LocalQueue, from 0."},
		{Name: "Flavors", Type: "string"},
		{Name: "Age", Type: "string"},
		{Name: "Reason", Type: "string", Priority: 1},
	}}
	for i := range wls {
		wl := &wls[i]
		pos, reason := "", conditionMessage(wl)
		if p, ok := positions[wl.Namespace+"/"+wl.Name]; ok {
			pos = fmt.Sprintf("%d/%d", p.inClusterQueue, p.inLocalQueue)
			if p.inClusterQueue < 0 {
				pos = fmt.Sprintf("-/%d", p.inLocalQueue)
			}
			if p.reason != "" {
				reason = p.reason
			}
		}
		if workload.HasQuotaReservation(wl) {
			reason = ""
		}
		cq := clusterQueueOf(wl)
		if cq == "-" && queues[wl.Namespace+"/"+string(wl.Spec.QueueName)] != "" {
			cq = queues[wl.Namespace+"/"+string(wl.Spec.QueueName)]
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{wl.Name, ownerOf(wl), string(wl.Spec.QueueName), cq, status(wl), orDash(pos), orDash(flavors(wl)), age(wl.CreationTimestamp, now), orDash(reason)},
			Object: runtime.RawExtension{Object: wl},
		})
	}
	return t
}

// status is a workload's phase in a word.
func status(wl *musterv1beta1.Workload) string {
	switch {
	case workload.IsFinished(wl):
		return "Finished"
	case !workload.IsActive(wl):
		return "Inactive"
	case workload.IsEvicting(wl):
		return "Evicting"
	case workload.IsAdmitted(wl):
		return "Admitted"
	case workload.HasQuotaReservation(wl):
		return "QuotaReserved"
	}
	return "Pending"
}

func conditionMessage(wl *musterv1beta1.Workload) string {
	if c := meta.FindStatusCondition(wl.Status.Conditions, musterv1beta1.WorkloadQuotaReserved); c != nil && c.Status == metav1.ConditionFalse {
		return c.Message
	}
	return ""
}

func ownerOf(wl *musterv1beta1.Workload) string {
	for _, o := range wl.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return strings.ToLower(o.Kind) + "/" + o.Name
		}
	}
	return "-"
}

func clusterQueueOf(wl *musterv1beta1.Workload) string {
	if wl.Status.Admission != nil {
		return string(wl.Status.Admission.ClusterQueue)
	}
	return "-"
}

// flavors is the admission's flavor per resource, e.g. "a100 (gpu), cpu-pool (cpu,memory)".
func flavors(wl *musterv1beta1.Workload) string {
	if wl.Status.Admission == nil {
		return ""
	}
	byFlavor := map[string]map[string]bool{}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		for res, f := range psa.Flavors {
			if byFlavor[string(f)] == nil {
				byFlavor[string(f)] = map[string]bool{}
			}
			byFlavor[string(f)][string(res)] = true
		}
	}
	var parts []string
	for f, res := range byFlavor {
		parts = append(parts, fmt.Sprintf("%s (%s)", f, strings.Join(sortedKeys(res), ",")))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func (l *listOptions) clusterQueues(ctx context.Context) error {
	var list musterv1beta1.ClusterQueueList
	if _, err := l.fetch(ctx, &list, false); err != nil {
		return err
	}
	sortByNamespaceAndName(list.Items, func(q *musterv1beta1.ClusterQueue) metav1.Object { return q })
	if l.printer.structured() {
		return l.printer.print(&list, l.Out)
	}
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Cohort", Type: "string"}, {Name: "Strategy", Type: "string"},
		{Name: "Pending", Type: "integer"}, {Name: "Admitted", Type: "integer"}, {Name: "Active", Type: "string"},
		{Name: "Stop", Type: "string"}, {Name: "Age", Type: "string"}, {Name: "Reason", Type: "string", Priority: 1},
	}}
	for i := range list.Items {
		q := &list.Items[i]
		active, why := activeOf(q.Status.Conditions)
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{q.Name, orDash(string(q.Spec.Cohort)), orDash(string(q.Spec.QueueingStrategy)), q.Status.PendingWorkloads, q.Status.AdmittedWorkloads, active, stopOf(q.Spec.StopPolicy), age(q.CreationTimestamp, l.Clock.Now()), orDash(why)},
			Object: runtime.RawExtension{Object: q},
		})
	}
	return l.printer.printTable(t, false, l.Out)
}

func (l *listOptions) localQueues(ctx context.Context) error {
	var list musterv1beta1.LocalQueueList
	if _, err := l.fetch(ctx, &list, true); err != nil {
		return err
	}
	sortByNamespaceAndName(list.Items, func(q *musterv1beta1.LocalQueue) metav1.Object { return q })
	if l.printer.structured() {
		return l.printer.print(&list, l.Out)
	}
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "ClusterQueue", Type: "string"},
		{Name: "Pending", Type: "integer"}, {Name: "Admitted", Type: "integer"}, {Name: "Active", Type: "string"},
		{Name: "Stop", Type: "string"}, {Name: "Age", Type: "string"}, {Name: "Reason", Type: "string", Priority: 1},
	}}
	for i := range list.Items {
		q := &list.Items[i]
		active, why := activeOf(q.Status.Conditions)
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{q.Name, string(q.Spec.ClusterQueue), q.Status.PendingWorkloads, q.Status.AdmittedWorkloads, active, stopOf(q.Spec.StopPolicy), age(q.CreationTimestamp, l.Clock.Now()), orDash(why)},
			Object: runtime.RawExtension{Object: q},
		})
	}
	return l.printer.printTable(t, l.allNamespaces, l.Out)
}

func activeOf(conds []metav1.Condition) (status, message string) {
	c := meta.FindStatusCondition(conds, "Active")
	if c == nil {
		return "Unknown", ""
	}
	if c.Status == metav1.ConditionTrue {
		return "True", ""
	}
	return string(c.Status), c.Reason + ": " + c.Message
}

func stopOf(p *musterv1beta1.StopPolicy) string {
	if p == nil || *p == musterv1beta1.None {
		return "-"
	}
	return string(*p)
}
