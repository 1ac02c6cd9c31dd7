package jobframework

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func template(annotations map[string]string) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{}
	t.Annotations = annotations
	return t
}

func TestTopologyRequestFromAnnotations(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string
		want        *musterv1beta1.PodSetTopologyRequest
	}{
		"none": {},
		"required": {map[string]string{"muster.dev/podset-required-topology": "rack"},
			&musterv1beta1.PodSetTopologyRequest{Required: ptr.To("rack"), PodIndexLabel: ptr.To("idx")}},
		"Kueue's prefix": {map[string]string{"kueue.x-k8s.io/podset-preferred-topology": "block"},
			&musterv1beta1.PodSetTopologyRequest{Preferred: ptr.To("block"), PodIndexLabel: ptr.To("idx")}},
		"muster.dev wins over Kueue's": {map[string]string{"kueue.x-k8s.io/podset-required-topology": "block", "muster.dev/podset-required-topology": "rack"},
			&musterv1beta1.PodSetTopologyRequest{Required: ptr.To("rack"), PodIndexLabel: ptr.To("idx")}},
		"unconstrained": {map[string]string{"muster.dev/podset-unconstrained-topology": "true"},
			&musterv1beta1.PodSetTopologyRequest{Unconstrained: ptr.To(true), PodIndexLabel: ptr.To("idx")}},
		"unconstrained false is nothing": {map[string]string{"muster.dev/podset-unconstrained-topology": "false"}, nil},
		"slices": {map[string]string{"muster.dev/podset-slice-required-topology": "host", "muster.dev/podset-slice-size": "4"},
			&musterv1beta1.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To("host"), PodSetSliceSize: ptr.To[int32](4), PodIndexLabel: ptr.To("idx")}},
		"group with a level": {map[string]string{"muster.dev/podset-required-topology": "rack", "muster.dev/podset-group-name": "g"},
			&musterv1beta1.PodSetTopologyRequest{Required: ptr.To("rack"), PodSetGroupName: ptr.To("g"), PodIndexLabel: ptr.To("idx")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(TopologyRequestOf(template(tc.annotations), "idx")).To(Equal(tc.want))
		})
	}
}

func TestTopologyAnnotationValidation(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string
		count       int32
		want        string // "" for valid
	}{
		"valid required":    {map[string]string{"muster.dev/podset-required-topology": "topology.kubernetes.io/rack"}, 4, ""},
		"two modes":         {map[string]string{"muster.dev/podset-required-topology": "rack", "kueue.x-k8s.io/podset-preferred-topology": "rack"}, 4, "more than one topology annotation"},
		"bad level":         {map[string]string{"muster.dev/podset-required-topology": "a b"}, 4, "name part must consist of"},
		"slice no size":     {map[string]string{"muster.dev/podset-slice-required-topology": "rack"}, 4, "must be set when"},
		"size no slice":     {map[string]string{"muster.dev/podset-slice-size": "2"}, 4, "may not be set when"},
		"size zero":         {map[string]string{"muster.dev/podset-slice-required-topology": "rack", "muster.dev/podset-slice-size": "0"}, 4, "greater than or equal to 1"},
		"size above count":  {map[string]string{"muster.dev/podset-slice-required-topology": "rack", "muster.dev/podset-slice-size": "8"}, 4, "not be greater than pod set count 4"},
		"size not dividing": {map[string]string{"muster.dev/podset-slice-required-topology": "rack", "muster.dev/podset-slice-size": "3"}, 4, "must divide the pod set count 4"},
		"group alone":       {map[string]string{"muster.dev/podset-group-name": "g"}, 1, "neither a required nor a preferred"},
		"group and slices": {map[string]string{"muster.dev/podset-required-topology": "rack", "muster.dev/podset-group-name": "g",
			"muster.dev/podset-slice-required-topology": "rack", "muster.dev/podset-slice-size": "2"}, 4, "may not be set when"},
		"unconstrained yes": {map[string]string{"kueue.x-k8s.io/podset-unconstrained-topology": "yes"}, 1, "must be a boolean value"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps := &musterv1beta1.PodSet{Name: "main", Count: tc.count, Template: *template(tc.annotations)}
			errs := ValidateTopologyAnnotations(ps, field.NewPath("podSets").Key("main"))
			if tc.want == "" {
				NewWithT(t).Expect(errs).To(BeEmpty())
				return
			}
			NewWithT(t).Expect(errs.ToAggregate()).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

func TestTopologyGroupsMustAgree(t *testing.T) {
	a := musterv1beta1.PodSet{Name: "master", Template: *template(map[string]string{"muster.dev/podset-required-topology": "rack", "muster.dev/podset-group-name": "g"})}
	b := musterv1beta1.PodSet{Name: "worker", Template: *template(map[string]string{"muster.dev/podset-preferred-topology": "rack", "muster.dev/podset-group-name": "g"})}
	NewWithT(t).Expect(validateTopologyGroups([]musterv1beta1.PodSet{a, b}).ToAggregate()).To(MatchError(ContainSubstring("must ask for the same")))
}

func TestMergeAndRestoreTopologyMarks(t *testing.T) {
	g := NewWithT(t)
	tpl := &corev1.PodTemplateSpec{}
	info := PodSetInfo{Name: "main", Topology: &TopologyInfo{Workload: "job-x", Gate: true}}
	g.Expect(info.Merge(tpl)).To(Succeed())
	g.Expect(tpl.Spec.SchedulingGates).To(ConsistOf(corev1.PodSchedulingGate{Name: musterv1beta1.TopologySchedulingGate}))
	g.Expect(tpl.Annotations).To(HaveKeyWithValue(musterv1beta1.WorkloadAnnotation, "job-x"))
	g.Expect(tpl.Labels).To(HaveKeyWithValue(musterv1beta1.PodSetLabel, "main"))
	g.Expect(info.Merge(tpl)).To(Succeed()) // twice adds nothing
	g.Expect(tpl.Spec.SchedulingGates).To(HaveLen(1))
	orig := PodSetInfo{Name: "main"}
	g.Expect(orig.Restore(tpl)).To(BeTrue())
	g.Expect(tpl.Spec.SchedulingGates).To(BeNil())
	g.Expect(tpl.Annotations).NotTo(HaveKey(musterv1beta1.WorkloadAnnotation))
	g.Expect(orig.Restore(tpl)).To(BeFalse())
}
