package gang

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod.muster.dev,admissionReviewVersions=v1

// PodWebhook gives the pods of a job handed to a gang scheduler the fields
// their template cannot carry: a batch/v1 Job's schedulerName and
// schedulingGroup are immutable once it exists, and Muster only learns at
// admission which gang scheduler binds it. The webhook sees only pods with
// the gang label (config/webhook's objectSelector), so a Muster outage
// blocks the creation of no other pod.
type PodWebhook struct{}

// SetupPodWebhook registers the pod webhook.
func SetupPodWebhook(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).WithDefaulter(PodWebhook{}).Complete()
}

// Default sets the pod's schedulerName and schedulingGroup from the
// annotations Muster put on its template. A pod that names another
// scheduler, or its own group, keeps them.
func (PodWebhook) Default(ctx context.Context, pod *corev1.Pod) error {
	if pod.Labels[musterv1beta1.GangProviderLabel] == "" {
		return nil
	}
	if name := pod.Annotations[musterv1beta1.SchedulerNameAnnotation]; name != "" &&
		(pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == corev1.DefaultSchedulerName) {
		pod.Spec.SchedulerName = name
	}
	if group := pod.Annotations[musterv1beta1.SchedulingGroupAnnotation]; group != "" && pod.Spec.SchedulingGroup == nil {
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	}
	log.FromContext(ctx).V(3).Info("Pointed pod at its gang scheduler", "pod", klog.KObj(pod), "scheduler", pod.Spec.SchedulerName)
	return nil
}
