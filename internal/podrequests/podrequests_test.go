package podrequests

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func ctr(requests, limits corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}
}

func limitRange(def, defReq corev1.ResourceList) corev1.LimitRange {
	return corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypePod, Default: list("cpu", "99")}, // Pod items never default
		{Type: corev1.LimitTypeContainer, Default: def, DefaultRequest: defReq},
	}}}
}

func TestPerPod(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	cases := map[string]struct {
		spec     corev1.PodSpec
		ranges   []corev1.LimitRange
		overhead corev1.ResourceList
		want     corev1.ResourceList
	}{
		"requests as written": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(list("cpu", "1", "nvidia.com/gpu", "8"), nil)}},
			want: list("cpu", "1", "nvidia.com/gpu", "8"),
		},
		"a GPU given only as a limit is requested": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(nil, list("nvidia.com/gpu", "8"))}},
			want: list("nvidia.com/gpu", "8"),
		},
		"limits fill only the missing requests, for every resource": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(list("cpu", "500m"), list("cpu", "2", "memory", "4Gi", "example.com/foo", "3"))}},
			want: list("cpu", "500m", "memory", "4Gi", "example.com/foo", "3"),
		},
		"limits fill init containers' requests": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{ctr(nil, list("cpu", "4"))},
				Containers:     []corev1.Container{ctr(list("cpu", "1"), nil)},
			},
			want: list("cpu", "4"),
		},
		"a sidecar adds to the main containers": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "s", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Limits: list("cpu", "1")}}},
				Containers:     []corev1.Container{ctr(list("cpu", "2"), nil)},
			},
			want: list("cpu", "3"),
		},
		"LimitRange defaultRequest fills a container that asks nothing": {
			spec:   corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}},
			ranges: []corev1.LimitRange{limitRange(list("cpu", "2"), list("cpu", "1", "memory", "1Gi"))},
			want:   list("cpu", "1", "memory", "1Gi"),
		},
		"a container's own limit wins over the LimitRange's defaultRequest": {
			spec:   corev1.PodSpec{Containers: []corev1.Container{ctr(nil, list("cpu", "3"))}},
			ranges: []corev1.LimitRange{limitRange(list("cpu", "2"), list("cpu", "1"))},
			want:   list("cpu", "3"),
		},
		"a LimitRange's default limit does not become a request by itself": {
			spec:   corev1.PodSpec{Containers: []corev1.Container{ctr(list("cpu", "1"), nil)}},
			ranges: []corev1.LimitRange{limitRange(list("cpu", "2", "memory", "2Gi"), nil)},
			want:   list("cpu", "1"),
		},
		"the first LimitRange to set a value wins": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}},
			ranges: []corev1.LimitRange{
				limitRange(nil, list("memory", "1Gi")),
				limitRange(nil, list("memory", "8Gi", "cpu", "250m")),
			},
			want: list("memory", "1Gi", "cpu", "250m"),
		},
		"LimitRange defaults reach init containers": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{ctr(nil, nil)},
				Containers:     []corev1.Container{ctr(list("memory", "512Mi"), nil)},
			},
			ranges: []corev1.LimitRange{limitRange(nil, list("memory", "1Gi"))},
			want:   list("memory", "1Gi"),
		},
		"RuntimeClass overhead is added": {
			spec:     corev1.PodSpec{RuntimeClassName: ptr.To("kata"), Containers: []corev1.Container{ctr(list("cpu", "1"), nil)}},
			overhead: list("cpu", "250m", "memory", "120Mi"),
			want:     list("cpu", "1250m", "memory", "120Mi"),
		},
		"overhead only for a pod that names a RuntimeClass": {
			spec:     corev1.PodSpec{Containers: []corev1.Container{ctr(list("cpu", "1"), nil)}},
			overhead: list("cpu", "250m"),
			want:     list("cpu", "1"),
		},
		"an overhead written in the template is kept": {
			spec:     corev1.PodSpec{RuntimeClassName: ptr.To("kata"), Overhead: list("cpu", "100m"), Containers: []corev1.Container{ctr(list("cpu", "1"), nil)}},
			overhead: list("cpu", "250m"),
			want:     list("cpu", "1100m"),
		},
		"pod-level limits fill pod-level requests no container makes": {
			spec: corev1.PodSpec{
				Resources:  &corev1.ResourceRequirements{Limits: list("cpu", "4", "memory", "8Gi")},
				Containers: []corev1.Container{ctr(list("cpu", "1"), nil), ctr(list("cpu", "1"), nil)},
			},
			want: list("cpu", "2", "memory", "8Gi"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := PerPod(&tc.spec, tc.ranges, tc.overhead)
			if !equal(got, tc.want) {
				t.Errorf("PerPod = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEffectiveLeavesItsInputAlone(t *testing.T) {
	spec := corev1.PodSpec{RuntimeClassName: ptr.To("kata"), Containers: []corev1.Container{ctr(nil, list("nvidia.com/gpu", "1"))}}
	out := Effective(&spec, []corev1.LimitRange{limitRange(nil, list("cpu", "1"))}, list("cpu", "1"))
	if spec.Containers[0].Resources.Requests != nil || spec.Overhead != nil {
		t.Fatalf("the input was changed: %+v", spec)
	}
	if got := out.Containers[0].Resources.Requests; !equal(got, list("nvidia.com/gpu", "1", "cpu", "1")) {
		t.Errorf("requests = %v", got)
	}
}

func equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
