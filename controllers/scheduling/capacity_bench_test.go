package scheduling

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkTrimmedPodMemory measures what the manager's Pod informer holds
// for 100,000 pods, trimmed by trimPod, against the same pods whole: pods
// of a typical training job (two containers with env, mounts, probes, a
// few volumes, managed fields, status with container statuses).
//
//	go test ./controllers/scheduling -run XXX -bench TrimmedPodMemory -benchtime 1x
func BenchmarkTrimmedPodMemory(b *testing.B) {
	for range b.N {
		full := heapOf(func() any { return pods(100_000, false) })
		trimmed := heapOf(func() any { return pods(100_000, true) })
		b.ReportMetric(full, "MiB-full")
		b.ReportMetric(trimmed, "MiB-trimmed")
	}
}

func heapOf(build func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
}

func pods(n int, trim bool) []any {
	out := make([]any, n)
	for i := range n {
		p := typicalPod(i)
		if trim {
			t, _ := trimPod(p)
			out[i] = t
		} else {
			out[i] = p
		}
	}
	return out
}

func typicalPod(i int) *corev1.Pod {
	container := func(name string) corev1.Container {
		c := corev1.Container{Name: name, Image: "registry.example.com/team/trainer:v1.2.3",
			Command: []string{"python", "-m", "train", "--epochs=10", "--batch-size=64"},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("64Gi"), "nvidia.com/gpu": resource.MustParse("1")},
				Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "ckpt", MountPath: "/ckpt"}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ready"}}}},
		}
		for k := range 12 {
			c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", k), Value: fmt.Sprintf("value-%d-%d", i, k)})
		}
		return c
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("job-%d-worker-%d", i/8, i%8), Namespace: "team-a", UID: "0b6c1a3e-7f7e-4a61-9a3b-2f3d4c5b6a7d",
			Labels:        map[string]string{"batch.kubernetes.io/job-completion-index": fmt.Sprint(i % 8), "job-name": fmt.Sprintf("job-%d", i/8), "muster.dev/podset": "main"},
			Annotations:   map[string]string{"muster.dev/workload": fmt.Sprintf("job-job-%d-abcde", i/8), "batch.kubernetes.io/job-completion-index": fmt.Sprint(i % 8)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: metav1.NewFieldsV1(strings.Repeat("f", 1500))}, {Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: metav1.NewFieldsV1(strings.Repeat("f", 1200))}},
		},
		Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%10_000), Containers: []corev1.Container{container("trainer"), container("sidecar")},
			Volumes:     []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, {Name: "ckpt", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3",
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "trainer", Ready: true, Image: "registry.example.com/team/trainer:v1.2.3", ImageID: "sha256:0123456789abcdef"}, {Name: "sidecar", Ready: true}}},
	}
}
