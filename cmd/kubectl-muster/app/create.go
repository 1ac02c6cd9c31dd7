package app

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func newCreateCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{Use: "create (localqueue|clusterqueue) NAME", Short: "Create a LocalQueue or a ClusterQueue from flags"}
	cmd.AddCommand(newCreateLocalQueueCommand(o), newCreateClusterQueueCommand(o))
	return cmd
}

// createFlags are what both create commands share: --dry-run and -o.
type createFlags struct {
	dryRun  string
	printer *printFlags
}

func (f *createFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dryRun, "dry-run", "none", `"none", "client" (print the object, send nothing) or "server" (the API server validates it, nothing is stored).`)
	f.printer.addFlags(cmd)
}

func (f *createFlags) validate() error {
	if !slices.Contains([]string{"none", "client", "server"}, f.dryRun) {
		return fmt.Errorf(`--dry-run must be "none", "client" or "server", not %q`, f.dryRun)
	}
	return f.printer.validate()
}

// create sends obj (unless --dry-run=client) and prints it: as -o says,
// or kubectl's "kind/name created".
func (o *Options) create(ctx context.Context, f *createFlags, obj client.Object, kind string) error {
	if f.dryRun != "client" {
		c, err := o.Client()
		if err != nil {
			return err
		}
		var opts []client.CreateOption
		if f.dryRun == "server" {
			opts = append(opts, client.DryRunAll)
		}
		if err := c.Create(ctx, obj, opts...); err != nil {
			return err
		}
	}
	if f.printer.structured() {
		obj.GetObjectKind().SetGroupVersionKind(musterv1beta1.GroupVersion.WithKind(kind))
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		if f.dryRun == "client" {
			// Nothing the API server would add: no status, no timestamp.
			delete(u, "status")
			unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		}
		return f.printer.print(&unstructured.Unstructured{Object: u}, o.Out)
	}
	suffix := ""
	if f.dryRun != "none" {
		suffix = " (" + f.dryRun + " dry run)"
	}
	_, err := fmt.Fprintf(o.Out, "%s/%s created%s\n", strings.ToLower(kind), obj.GetName(), suffix)
	return err
}

func newCreateLocalQueueCommand(o *Options) *cobra.Command {
	f := &createFlags{printer: newPrintFlags()}
	var clusterQueue string
	cmd := &cobra.Command{
		Use:     "localqueue NAME --clusterqueue CLUSTERQUEUE",
		Aliases: []string{"lq"},
		Short:   "Create a LocalQueue feeding a ClusterQueue",
		Example: "  kubectl muster create localqueue main -n team-a --clusterqueue gpu-a",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if clusterQueue == "" {
				return usageError(cmd, "--clusterqueue is required")
			}
			if err := f.validate(); err != nil {
				return usageError(cmd, "%v", err)
			}
			ns, err := o.Namespace()
			if err != nil {
				return err
			}
			lq := &musterv1beta1.LocalQueue{
				ObjectMeta: metav1.ObjectMeta{Name: args[0], Namespace: ns},
				Spec:       musterv1beta1.LocalQueueSpec{ClusterQueue: musterv1beta1.ClusterQueueReference(clusterQueue)},
			}
			return o.create(cmd.Context(), f, lq, "LocalQueue")
		},
	}
	cmd.Flags().StringVarP(&clusterQueue, "clusterqueue", "c", "", "The ClusterQueue the LocalQueue feeds.")
	f.add(cmd)
	return cmd
}

// clusterQueueFlags are the flags of create clusterqueue (kueuectl's).
type clusterQueueFlags struct {
	cohort, strategy, namespaceSelector        string
	reclaimWithinCohort, preemptionWithinQueue string
	nominal, borrowing, lending                string
}

func newCreateClusterQueueCommand(o *Options) *cobra.Command {
	f := &createFlags{printer: newPrintFlags()}
	q := &clusterQueueFlags{}
	cmd := &cobra.Command{
		Use:     "clusterqueue NAME",
		Aliases: []string{"cq"},
		Short:   "Create a ClusterQueue with its quota",
		Example: `  kubectl muster create clusterqueue gpu-a --cohort pool \
    --nominal-quota "a100:nvidia.com/gpu=8;cpu=64,h100:nvidia.com/gpu=8;cpu=64" \
    --borrowing-limit "a100:nvidia.com/gpu=4"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(); err != nil {
				return usageError(cmd, "%v", err)
			}
			cq, err := q.build(args[0])
			if err != nil {
				return usageError(cmd, "%v", err)
			}
			return o.create(cmd.Context(), f, cq, "ClusterQueue")
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&q.cohort, "cohort", "", "The cohort the queue shares quota in.")
	fl.StringVar(&q.strategy, "queuing-strategy", "", "StrictFIFO or BestEffortFIFO (the default).")
	fl.StringVar(&q.namespaceSelector, "namespace-selector", "", "Label selector of the namespaces whose LocalQueues may feed it, e.g. team=a (default: all).")
	fl.StringVar(&q.reclaimWithinCohort, "reclaim-within-cohort", "", "Never, LowerPriority or Any.")
	fl.StringVar(&q.preemptionWithinQueue, "preemption-within-cluster-queue", "", "Never, LowerPriority or LowerOrNewerEqualPriority.")
	fl.StringVar(&q.nominal, "nominal-quota", "", `Quota per flavor: "FLAVOR:RESOURCE=QTY;RESOURCE=QTY,FLAVOR:...".`)
	fl.StringVar(&q.borrowing, "borrowing-limit", "", "Borrowing limits, in the form of --nominal-quota.")
	fl.StringVar(&q.lending, "lending-limit", "", "Lending limits, in the form of --nominal-quota.")
	f.add(cmd)
	return cmd
}

func (q *clusterQueueFlags) build(name string) (*musterv1beta1.ClusterQueue, error) {
	cq := &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}}
	cq.Spec.Cohort = musterv1beta1.CohortReference(q.cohort)
	if q.strategy != "" {
		s := musterv1beta1.QueueingStrategy(q.strategy)
		if s != musterv1beta1.StrictFIFO && s != musterv1beta1.BestEffortFIFO {
			return nil, fmt.Errorf("--queuing-strategy must be StrictFIFO or BestEffortFIFO, not %q", q.strategy)
		}
		cq.Spec.QueueingStrategy = s
	}
	if q.namespaceSelector != "" {
		sel, err := metav1.ParseToLabelSelector(q.namespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("--namespace-selector: %w", err)
		}
		cq.Spec.NamespaceSelector = sel
	} else {
		cq.Spec.NamespaceSelector = &metav1.LabelSelector{}
	}
	if q.reclaimWithinCohort != "" || q.preemptionWithinQueue != "" {
		cq.Spec.Preemption = &musterv1beta1.ClusterQueuePreemption{
			ReclaimWithinCohort: musterv1beta1.PreemptionPolicy(q.reclaimWithinCohort),
			WithinClusterQueue:  musterv1beta1.PreemptionPolicy(q.preemptionWithinQueue),
		}
	}
	groups, err := resourceGroups(q.nominal, q.borrowing, q.lending)
	if err != nil {
		return nil, err
	}
	cq.Spec.ResourceGroups = groups
	return cq, nil
}

// quotaSpec is --nominal-quota parsed: flavors in order, each with its
// resources in order.
type quotaSpec struct {
	flavors []string
	amounts map[string][]resourceAmount
}

type resourceAmount struct {
	name corev1.ResourceName
	qty  resource.Quantity
}

func parseQuota(flag, s string) (quotaSpec, error) {
	q := quotaSpec{amounts: map[string][]resourceAmount{}}
	if s == "" {
		return q, nil
	}
	for _, part := range strings.Split(s, ",") {
		flavor, list, ok := strings.Cut(part, ":")
		if !ok || flavor == "" || list == "" {
			return q, fmt.Errorf("--%s: %q is not FLAVOR:RESOURCE=QTY[;RESOURCE=QTY]", flag, part)
		}
		if _, dup := q.amounts[flavor]; dup {
			return q, fmt.Errorf("--%s: flavor %s given twice", flag, flavor)
		}
		q.flavors = append(q.flavors, flavor)
		for _, kv := range strings.Split(list, ";") {
			res, v, ok := strings.Cut(kv, "=")
			if !ok || res == "" {
				return q, fmt.Errorf("--%s: %q is not RESOURCE=QTY", flag, kv)
			}
			qty, err := resource.ParseQuantity(v)
			if err != nil {
				return q, fmt.Errorf("--%s: %s=%s: %w", flag, res, v, err)
			}
			q.amounts[flavor] = append(q.amounts[flavor], resourceAmount{name: corev1.ResourceName(res), qty: qty})
		}
	}
	return q, nil
}

// resourceGroups turns the quota flags into resource groups: flavors with
// the same resources share a group (the flavors a workload may fall back
// between), in the order given.
func resourceGroups(nominal, borrowing, lending string) ([]musterv1beta1.ResourceGroup, error) {
	n, err := parseQuota("nominal-quota", nominal)
	if err != nil {
		return nil, err
	}
	b, err := parseQuota("borrowing-limit", borrowing)
	if err != nil {
		return nil, err
	}
	l, err := parseQuota("lending-limit", lending)
	if err != nil {
		return nil, err
	}
	for _, extra := range []quotaSpec{b, l} {
		for _, f := range extra.flavors {
			if _, ok := n.amounts[f]; !ok {
				return nil, fmt.Errorf("a limit names flavor %s, which --nominal-quota does not", f)
			}
		}
	}
	if err := disjointGroups(n); err != nil {
		return nil, err
	}
	var groups []musterv1beta1.ResourceGroup
	index := map[string]int{}
	for _, f := range n.flavors {
		fq := musterv1beta1.FlavorQuotas{Name: musterv1beta1.ResourceFlavorReference(f)}
		var covered []corev1.ResourceName
		for _, ra := range n.amounts[f] {
			rq := musterv1beta1.ResourceQuota{Name: ra.name, NominalQuota: ra.qty, BorrowingLimit: limitOf(b, f, ra.name), LendingLimit: limitOf(l, f, ra.name)}
			fq.Resources = append(fq.Resources, rq)
			covered = append(covered, ra.name)
		}
		key := fmt.Sprint(covered)
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, musterv1beta1.ResourceGroup{CoveredResources: covered})
		}
		groups[i].Flavors = append(groups[i].Flavors, fq)
	}
	return groups, nil
}

// disjointGroups fails when a resource would be in two resource groups
// (flavors with different resource sets that share one), which the API
// rejects: say so before sending anything.
func disjointGroups(n quotaSpec) error {
	groupOf := map[corev1.ResourceName]string{}
	for _, f := range n.flavors {
		var names []string
		for _, ra := range n.amounts[f] {
			names = append(names, string(ra.name))
		}
		key := strings.Join(names, ";")
		for _, ra := range n.amounts[f] {
			if g, ok := groupOf[ra.name]; ok && g != key {
				return fmt.Errorf("--nominal-quota: %s is in flavors with different resources (%s and %s): a resource belongs to one resource group, whose flavors all list the same resources", ra.name, g, key)
			}
			groupOf[ra.name] = key
		}
	}
	return nil
}

func limitOf(q quotaSpec, flavor string, res corev1.ResourceName) *resource.Quantity {
	for _, ra := range q.amounts[flavor] {
		if ra.name == res {
			v := ra.qty
			return &v
		}
	}
	return nil
}
