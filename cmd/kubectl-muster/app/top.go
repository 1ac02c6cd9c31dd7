package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func newTopCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "top [CLUSTERQUEUE...]",
		Short: "Show quota use per ClusterQueue, flavor and resource: reserved and in use against nominal, and what is borrowed",
		Example: `  kubectl muster top
  kubectl muster top gpu-a gpu-b`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.top(cmd.Context(), args) },
	}
}

func (o *Options) top(ctx context.Context, names []string) error {
	c, err := o.Client()
	if err != nil {
		return err
	}
	var list musterv1beta1.ClusterQueueList
	if err := c.List(ctx, &list); err != nil {
		return err
	}
	sortByNamespaceAndName(list.Items, func(q *musterv1beta1.ClusterQueue) metav1.Object { return q })
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "ClusterQueue", Type: "string"}, {Name: "Cohort", Type: "string"}, {Name: "Flavor", Type: "string"},
		{Name: "Resource", Type: "string"}, {Name: "Nominal", Type: "string"}, {Name: "Reserved", Type: "string"},
		{Name: "In use", Type: "string"}, {Name: "Borrowed", Type: "string"}, {Name: "Reserved%", Type: "string"},
	}}
	found := map[string]bool{}
	for i := range list.Items {
		q := &list.Items[i]
		if len(want) > 0 && !want[q.Name] {
			continue
		}
		found[q.Name] = true
		t.Rows = append(t.Rows, topRows(q)...)
	}
	for n := range want {
		if !found[n] {
			fmt.Fprintf(o.ErrOut, "Warning: no ClusterQueue %s\n", n)
		}
	}
	return newPrintFlags().printTable(t, false, o.Out)
}

// topRows are a ClusterQueue's rows, one per flavor and resource of its
// quota.
func topRows(q *musterv1beta1.ClusterQueue) []metav1.TableRow {
	reserved, used := usageByKey(q.Status.FlavorsReservation), usageByKey(q.Status.FlavorsUsage)
	var rows []metav1.TableRow
	for _, rg := range q.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			for _, rq := range fq.Resources {
				key := string(fq.Name) + "/" + string(rq.Name)
				r, u := reserved[key], used[key]
				rows = append(rows, metav1.TableRow{Cells: []any{
					q.Name, orDash(string(q.Spec.Cohort)), string(fq.Name), string(rq.Name),
					rq.NominalQuota.String(), r.Total.String(), u.Total.String(), r.Borrowed.String(), percent(r.Total, rq.NominalQuota),
				}})
			}
		}
	}
	return rows
}

func usageByKey(fus []musterv1beta1.FlavorUsage) map[string]musterv1beta1.ResourceUsage {
	out := map[string]musterv1beta1.ResourceUsage{}
	for _, fu := range fus {
		for _, ru := range fu.Resources {
			out[string(fu.Name)+"/"+string(ru.Name)] = ru
		}
	}
	return out
}

func percent(part, whole resource.Quantity) string {
	if whole.IsZero() {
		if part.IsZero() {
			return "-"
		}
		return "borrowed"
	}
	return fmt.Sprintf("%.0f%%", 100*part.AsApproximateFloat64()/whole.AsApproximateFloat64())
}
