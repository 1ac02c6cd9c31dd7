package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// kueueGroup is Kueue's API group.
const kueueGroup = "kueue.x-k8s.io"

// kueueKind is one kind import-kueue translates: Kueue's resource, and
// the Muster object it becomes.
type kueueKind struct {
	kind, resource string
	// musterKind is the Muster kind when its name differs from Kueue's.
	musterKind string
	namespaced bool
	// renames maps Kueue's spec field paths (v1beta2 names) to Muster's.
	renames map[string]string
	// values rewrites values whose names differ (spec, after renames).
	values func(spec map[string]any)
	// newObj is the Muster object, with its kind set.
	newObj func() client.Object
	// topLevel are fields outside spec that move over (a priority class's
	// value and description).
	topLevel []string
}

// kueueKinds in the order they are written: what others refer to first.
var kueueKinds = []kueueKind{
	{kind: "Topology", resource: "topologies", newObj: func() client.Object { return &musterv1beta1.Topology{} }},
	{kind: "ResourceFlavor", resource: "resourceflavors", newObj: func() client.Object { return &musterv1beta1.ResourceFlavor{} }},
	{kind: "WorkloadPriorityClass", resource: "workloadpriorityclasses", topLevel: []string{"value", "description"},
		newObj: func() client.Object { return &musterv1beta1.WorkloadPriorityClass{} }},
	{kind: "ProvisioningRequestConfig", resource: "provisioningrequestconfigs",
		newObj: func() client.Object { return &musterv1beta1.ProvisioningRequestConfig{} }},
	{kind: "MultiKueueConfig", musterKind: "MultiClusterConfig", resource: "multikueueconfigs",
		newObj: func() client.Object { return &musterv1beta1.MultiClusterConfig{} }},
	{kind: "MultiKueueCluster", musterKind: "MultiCluster", resource: "multikueueclusters", values: multiKueueClusterValues,
		newObj: func() client.Object { return &musterv1beta1.MultiCluster{} }},
	{kind: "AdmissionCheck", resource: "admissionchecks", values: admissionCheckValues,
		newObj: func() client.Object { return &musterv1beta1.AdmissionCheck{} }},
	{kind: "Cohort", resource: "cohorts", renames: map[string]string{"parentName": "parent"},
		newObj: func() client.Object { return &musterv1beta1.Cohort{} }},
	{kind: "ClusterQueue", resource: "clusterqueues", renames: map[string]string{"cohortName": "cohort"}, values: fungibilityValues,
		newObj: func() client.Object { return &musterv1beta1.ClusterQueue{} }},
	{kind: "LocalQueue", resource: "localqueues", namespaced: true,
		newObj: func() client.Object { return &musterv1beta1.LocalQueue{} }},
}

type importOptions struct {
	*Options
	dryRun bool
}

func newImportKueueCommand(o *Options) *cobra.Command {
	im := &importOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "import-kueue",
		Short: "Write the Muster equivalents of a cluster's Kueue queues, flavors, cohorts, topologies, priority classes and admission checks",
		Long: `import-kueue reads Kueue's ResourceFlavors, ClusterQueues, Cohorts, LocalQueues,
Topologies and WorkloadPriorityClasses (kueue.x-k8s.io, the version the cluster
prefers), with their AdmissionChecks, ProvisioningRequestConfigs,
MultiKueueConfigs and MultiKueueClusters, and applies Muster objects of the
same names and meaning (server-side apply, field manager
kubectl-muster-import); a check of Kueue's ProvisioningRequest or MultiKueue
controller becomes one of Muster's (MultiKueue's objects become
MultiClusterConfigs and MultiClusters). What has no Muster equivalent is left out
and reported, object by object.

Jobs keep their kueue.x-k8s.io/queue-name label: Muster honours it.`,
		Example: `  kubectl muster import-kueue --dry-run     # print the objects and the report, change nothing
  kubectl muster import-kueue`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return im.run(cmd.Context()) },
	}
	cmd.Flags().BoolVar(&im.dryRun, "dry-run", false, "Print the Muster objects as YAML and what cannot be translated; apply nothing.")
	return cmd
}

func (im *importOptions) run(ctx context.Context) error {
	cfg, err := im.RESTConfig()
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	version, err := preferredVersion(dc, kueueGroup)
	if err != nil {
		return err
	}
	dyn, err := im.Dynamic()
	if err != nil {
		return err
	}
	objs, report, err := readKueue(ctx, dc, dyn, version)
	if err != nil {
		return err
	}
	if im.dryRun {
		return printImport(im.Out, objs, report)
	}
	c, err := im.Client()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		delete(u, "status")
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
		apply := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
		if err := c.Apply(ctx, apply, client.FieldOwner("kubectl-muster-import"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(obj), err)
		}
		fmt.Fprintf(im.Out, "%s/%s applied\n", strings.ToLower(obj.GetObjectKind().GroupVersionKind().Kind), keyOf(obj))
	}
	return writeReport(im.ErrOut, report)
}

// preferredVersion is the version of group the API server prefers.
func preferredVersion(dc discovery.DiscoveryInterface, group string) (string, error) {
	groups, err := dc.ServerGroups()
	if err != nil {
		return "", err
	}
	for _, g := range groups.Groups {
		if g.Name == group {
			return g.PreferredVersion.Version, nil
		}
	}
	return "", fmt.Errorf("the cluster serves no %s API: is Kueue installed?", group)
}

// readKueue reads every kind the cluster serves and translates it.
func readKueue(ctx context.Context, dc discovery.DiscoveryInterface, dyn dynamic.Interface, version string) ([]client.Object, []string, error) {
	var objs []client.Object
	var report []string
	for _, k := range kueueKinds {
		gvr, ok := servedVersion(dc, k.resource, version)
		if !ok {
			continue
		}
		list, err := dyn.Resource(gvr).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
				report = append(report, fmt.Sprintf("%s: not read (%v)", k.resource, err))
				continue
			}
			return nil, nil, err
		}
		slices.SortFunc(list.Items, func(a, b unstructured.Unstructured) int { return strings.Compare(keyOf(&a), keyOf(&b)) })
		for i := range list.Items {
			obj, dropped, err := translate(k, &list.Items[i])
			if err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", k.kind, keyOf(&list.Items[i]), err)
			}
			if mc, ok := obj.(*musterv1beta1.MultiCluster); ok && mc.Spec.KubeConfig.LocationType != musterv1beta1.SecretLocationType {
				report = append(report, fmt.Sprintf("MultiCluster %s: its kubeconfig is a file (locationType %s); Muster reads kubeconfigs only from Secrets: left out",
					mc.Name, mc.Spec.KubeConfig.LocationType))
				continue
			}
			objs = append(objs, obj)
			for _, d := range dropped {
				report = append(report, fmt.Sprintf("%s %s: %s has no Muster equivalent; left out", k.kind, keyOf(obj), d))
			}
			if mc, ok := obj.(*musterv1beta1.MultiCluster); ok {
				report = append(report, fmt.Sprintf("MultiCluster %s: copy its Secret %s from Kueue's namespace into Muster's (Muster reads kubeconfigs only from Secrets)",
					mc.Name, mc.Spec.KubeConfig.Location))
			}
			if ac, ok := obj.(*musterv1beta1.AdmissionCheck); ok && !musterController(ac.Spec.ControllerName) {
				report = append(report, fmt.Sprintf("AdmissionCheck %s: its controller %s answers Kueue's Workloads, not Muster's; "+
					"the ClusterQueues naming it admit nothing until a controller marks it Active for Muster", ac.Name, ac.Spec.ControllerName))
			}
		}
	}
	return objs, report, nil
}

// musterController reports whether Muster answers checks of a controller.
func musterController(name string) bool {
	return name == musterv1beta1.ProvisioningRequestControllerName || name == musterv1beta1.MultiClusterControllerName
}

// servedVersion is the version to read a resource at: the group's
// preferred one, or any that serves it (Cohort was v1alpha1 before
// v1beta2, Topology v1alpha1 before v1beta1).
func servedVersion(dc discovery.DiscoveryInterface, resource, preferred string) (schema.GroupVersionResource, bool) {
	for _, v := range []string{preferred, "v1beta2", "v1beta1", "v1alpha1"} {
		rl, err := dc.ServerResourcesForGroupVersion(kueueGroup + "/" + v)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			if r.Name == resource {
				return schema.GroupVersionResource{Group: kueueGroup, Version: v, Resource: resource}, true
			}
		}
	}
	return schema.GroupVersionResource{}, false
}

// translate makes the Muster object of a Kueue object: its name, labels,
// annotations and spec (fields renamed to Muster's), and lists the fields
// that did not survive the trip through Muster's type.
func translate(k kueueKind, u *unstructured.Unstructured) (client.Object, []string, error) {
	src := map[string]any{}
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		spec = renamed(runtime.DeepCopyJSON(spec), k.renames)
		if k.values != nil {
			k.values(spec)
		}
		src["spec"] = spec
	}
	for _, f := range k.topLevel {
		if v, ok := u.Object[f]; ok {
			src[f] = v
		}
	}
	data, err := json.Marshal(src)
	if err != nil {
		return nil, nil, err
	}
	obj := k.newObj()
	if err := json.Unmarshal(data, obj); err != nil {
		return nil, nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(musterv1beta1.GroupVersion.WithKind(k.muster()))
	obj.SetName(u.GetName())
	obj.SetNamespace(u.GetNamespace())
	obj.SetLabels(u.GetLabels())
	obj.SetAnnotations(withoutLastApplied(u.GetAnnotations()))
	back, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, nil, err
	}
	var dropped []string
	lostFields("", src, back, &dropped)
	return obj, dropped, nil
}

// renamed renames the top-level spec fields Kueue v1beta2 renamed.
func renamed(spec map[string]any, renames map[string]string) map[string]any {
	for from, to := range renames {
		if v, ok := spec[from]; ok {
			delete(spec, from)
			spec[to] = v
		}
	}
	return spec
}

// admissionCheckValues points a check of Kueue's ProvisioningRequest
// controller at Muster's, and its parameters at Muster's copy of the
// config. Another controller's check keeps its name: that controller must
// answer Muster's Workloads.
func admissionCheckValues(spec map[string]any) {
	switch spec["controllerName"] {
	case "kueue.x-k8s.io/provisioning-request":
		spec["controllerName"] = musterv1beta1.ProvisioningRequestControllerName
	case "kueue.x-k8s.io/multikueue":
		spec["controllerName"] = musterv1beta1.MultiClusterControllerName
	}
	if p, ok := spec["parameters"].(map[string]any); ok && p["apiGroup"] == kueueGroup {
		p["apiGroup"] = musterv1beta1.GroupVersion.Group
		if p["kind"] == "MultiKueueConfig" {
			p["kind"] = "MultiClusterConfig"
		}
	}
}

// muster is the kind's Muster name.
func (k kueueKind) muster() string {
	if k.musterKind != "" {
		return k.musterKind
	}
	return k.kind
}

// multiKueueClusterValues moves Kueue v1beta2's
// spec.clusterSource.kubeConfig to Muster's spec.kubeConfig (v1beta1's
// place); a cluster profile has no Muster equivalent and is left for the
// report.
func multiKueueClusterValues(spec map[string]any) {
	src, ok := spec["clusterSource"].(map[string]any)
	if !ok {
		return
	}
	if kc, ok := src["kubeConfig"]; ok {
		spec["kubeConfig"] = kc
		delete(src, "kubeConfig")
	}
	if len(src) == 0 {
		delete(spec, "clusterSource")
	}
}

// fungibilityValues maps Kueue v1beta2's MayStopSearch to what it means
// in each field (v1beta1's, and Muster's, Borrow and Preempt).
func fungibilityValues(spec map[string]any) {
	ff, ok := spec["flavorFungibility"].(map[string]any)
	if !ok {
		return
	}
	for field, word := range map[string]string{"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"} {
		if ff[field] == "MayStopSearch" {
			ff[field] = word
		}
	}
}

// lostFields appends the paths of what src has (set to something) that
// got does not.
func lostFields(path string, src, got any, out *[]string) {
	switch s := src.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		for _, k := range sortedKeys(s) {
			p := strings.TrimPrefix(path+"."+k, ".")
			gv, ok := g[k]
			if !ok {
				if !empty(s[k]) {
					*out = append(*out, p)
				}
				continue
			}
			lostFields(p, s[k], gv, out)
		}
	case []any:
		g, _ := got.([]any)
		for i := range s {
			if i < len(g) {
				lostFields(fmt.Sprintf("%s[%d]", path, i), s[i], g[i], out)
			}
		}
	}
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case float64:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func withoutLastApplied(a map[string]string) map[string]string {
	delete(a, "kubectl.kubernetes.io/last-applied-configuration")
	if len(a) == 0 {
		return nil
	}
	return a
}

func keyOf(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

func printImport(out io.Writer, objs []client.Object, report []string) error {
	for _, obj := range objs {
		data, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "---\n%s", stripEmpty(data)); err != nil {
			return err
		}
	}
	return writeReport(out, report)
}

// stripEmpty drops the empty status and creationTimestamp a typed object
// marshals with.
func stripEmpty(data []byte) []byte {
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return data
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return data
	}
	return out
}

func writeReport(out io.Writer, report []string) error {
	if len(report) == 0 {
		_, err := fmt.Fprintln(out, "# Everything translated.")
		return err
	}
	sort.Strings(report)
	if _, err := fmt.Fprintf(out, "# Not translated (%d):\n", len(report)); err != nil {
		return err
	}
	for _, r := range report {
		if _, err := fmt.Fprintf(out, "#   %s\n", r); err != nil {
			return err
		}
	}
	return nil
}
