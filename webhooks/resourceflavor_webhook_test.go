package webhooks

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func TestFlavorInUseKeepsWhatPlacementsDependOn(t *testing.T) {
	flavor := func(inUse bool, topo string, labels map[string]string, tols ...corev1.Toleration) *musterv1beta1.ResourceFlavor {
		rf := &musterv1beta1.ResourceFlavor{Spec: musterv1beta1.ResourceFlavorSpec{
			TopologyName: musterv1beta1.TopologyReference(topo), NodeLabels: labels, Tolerations: tols}}
		if inUse {
			rf.Finalizers = []string{musterv1beta1.ResourceInUseFinalizer}
		}
		return rf
	}
	a, b := map[string]string{"pool": "a"}, map[string]string{"pool": "b"}
	tol := corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}
	cases := map[string]struct {
		old, new *musterv1beta1.ResourceFlavor
		want     string
	}{
		"unused may change anything":      {flavor(false, "t1", a), flavor(false, "t2", b), ""},
		"in use: topology fixed":          {flavor(true, "t1", a), flavor(true, "t2", a), "spec.topologyName"},
		"in use: topology not added":      {flavor(true, "", a), flavor(true, "t1", a), "spec.topologyName"},
		"in use: labels fixed with topo":  {flavor(true, "t1", a), flavor(true, "t1", b), "spec.nodeLabels"},
		"in use: tolerations fixed":       {flavor(true, "t1", a), flavor(true, "t1", a, tol), "spec.tolerations"},
		"in use without topology: labels": {flavor(true, "", a), flavor(true, "", b), ""},
		"in use: unchanged":               {flavor(true, "t1", a), flavor(true, "t1", a), ""},
		"in use: node fit not turned off": {flavor(true, "", a), withFit(flavor(true, "", a), musterv1beta1.NodeFitNone), "spec.nodeFit"},
		"in use: node fit not turned on":  {withFit(flavor(true, "", a), musterv1beta1.NodeFitNone), flavor(true, "", a), "spec.nodeFit"},
		"in use: Check may become Pin":    {flavor(true, "", a), withFit(flavor(true, "", a), musterv1beta1.NodeFitPin), ""},
		"unused: node fit may change":     {flavor(false, "", a), withFit(flavor(false, "", a), musterv1beta1.NodeFitNone), ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			errs := validateFlavorInUse(tc.old, tc.new)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want)):
				t.Fatalf("errors %v, want one on %s", errs, tc.want)
			}
		})
	}
}

func withFit(rf *musterv1beta1.ResourceFlavor, m musterv1beta1.NodeFitMode) *musterv1beta1.ResourceFlavor {
	rf.Spec.NodeFit = m
	return rf
}
