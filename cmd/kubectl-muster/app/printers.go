package app

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// printFlags is -o: the table (wide with more columns), or any of
// cli-runtime's printers (json, yaml, name, jsonpath, go-template).
type printFlags struct {
	*genericclioptions.PrintFlags
}

func newPrintFlags() *printFlags {
	return &printFlags{PrintFlags: genericclioptions.NewPrintFlags("").WithTypeSetter(Scheme)}
}

func (p *printFlags) addFlags(cmd *cobra.Command) { p.AddFlags(cmd) }

func (p *printFlags) output() string { return *p.OutputFormat }

// structured is whether -o names a cli-runtime printer rather than the table.
func (p *printFlags) structured() bool { return p.output() != "" && p.output() != "wide" }

func (p *printFlags) validate() error {
	if !p.structured() {
		return nil
	}
	_, err := p.ToPrinter()
	return err
}

// print prints objects with the chosen cli-runtime printer.
func (p *printFlags) print(obj runtime.Object, out io.Writer) error {
	printer, err := p.ToPrinter()
	if err != nil {
		return err
	}
	return printer.PrintObj(obj, out)
}

// printTable prints a table as kubectl get does, with a NAMESPACE column
// when listing across namespaces and the wide columns with -o wide.
func (p *printFlags) printTable(t *metav1.Table, withNamespace bool, out io.Writer) error {
	if len(t.Rows) == 0 {
		_, err := fmt.Fprintln(out, "No resources found.")
		return err
	}
	printer := printers.NewTablePrinter(printers.PrintOptions{WithNamespace: withNamespace, Wide: p.output() == "wide"})
	return printer.PrintObj(t, out)
}

// age is an object's age as kubectl prints it.
func age(ts metav1.Time, now time.Time) string {
	if ts.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(ts.Time))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sortedKeys are a map's keys as strings, sorted (resource names, label
// keys).
func sortedKeys[K ~string, V any](m map[K]V) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, string(k))
	}
	return out
}

// sortByNamespaceAndName orders a list as kubectl does.
func sortByNamespaceAndName[T any](items []T, obj func(*T) metav1.Object) {
	slices.SortFunc(items, func(a, b T) int {
		oa, ob := obj(&a), obj(&b)
		if c := strings.Compare(oa.GetNamespace(), ob.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(oa.GetName(), ob.GetName())
	})
}
