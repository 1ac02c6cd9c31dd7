package provisioning

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/internal/podrequests"
	"github.com/musterhq/muster/internal/workload"
)

// Labels on the objects the check creates, to find them again.
const (
	// WorkloadLabel names the Workload a ProvisioningRequest or PodTemplate
	// was made for.
	WorkloadLabel = "muster.dev/provisioning-workload"
	// CheckLabel names its AdmissionCheck.
	CheckLabel = "muster.dev/admission-check"
	// ReservationAnnotation records the reservation a request was made
	// for.
	ReservationAnnotation = musterv1beta1.ReservationAnnotation
)

// reservationOf identifies the workload's current reservation.
func reservationOf(wl *musterv1beta1.Workload) string { return workload.ReservationID(wl) }

// requestName is the ProvisioningRequest of a workload's check at an
// attempt: the same name on every replica and after a restart, so a
// request is never created twice.
func requestName(wl, check string, attempt int32) string {
	return boundedName(fmt.Sprintf("%s-%s-%d", wl, check, attempt))
}

// templateName is the PodTemplate of one pod set of a request.
func templateName(pr, podSet string) string { return boundedName("ppt-" + pr + "-" + podSet) }

// boundedName keeps a name within the 253 characters of an object name,
// replacing the tail of a longer one with a hash of it.
func boundedName(name string) string {
	const limit = 253
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])[:10]
	return name[:limit-11] + "-" + h
}

// managedPodSets are the pod sets the request provisions: those that ask
// for a resource the config manages (all when it names none), in
// admission order.
func managedPodSets(wl *musterv1beta1.Workload, cfg *musterv1beta1.ProvisioningRequestConfig) []string {
	var out []string
	for _, ps := range wl.Spec.PodSets {
		if managed(&ps, cfg.Spec.ManagedResources) {
			out = append(out, ps.Name)
		}
	}
	return out
}

func managed(ps *musterv1beta1.PodSet, resources []corev1.ResourceName) bool {
	if len(resources) == 0 {
		return true
	}
	for name := range podrequests.PerPod(&ps.Template.Spec, nil, nil) {
		if slices.Contains(resources, name) {
			return true
		}
	}
	return false
}

// podTemplates are the request's PodTemplates: each provisioned pod set's
// template with its admission's placement (the flavor's node labels and
// tolerations), so that the autoscaler scales the node group the pods
// will run on. Scheduling gates are left out: the autoscaler must see the
// pods as schedulable.
func podTemplates(wl *musterv1beta1.Workload, check, prName string, podSets []string, infos []jobframework.PodSetInfo) ([]*corev1.PodTemplate, error) {
	var out []*corev1.PodTemplate
	for _, name := range podSets {
		i := slices.IndexFunc(wl.Spec.PodSets, func(ps musterv1beta1.PodSet) bool { return ps.Name == name })
		tmpl := wl.Spec.PodSets[i].Template.DeepCopy()
		if j := slices.IndexFunc(infos, func(in jobframework.PodSetInfo) bool { return in.Name == name }); j >= 0 {
			info := infos[j]
			info.Topology, info.Gang = nil, nil
			if err := info.Merge(tmpl); err != nil {
				return nil, err
			}
		}
		tmpl.Spec.SchedulingGates = nil
		out = append(out, &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: templateName(prName, name), Namespace: wl.Namespace, Labels: labelsFor(wl.Name, check)},
			Template:   *tmpl,
		})
	}
	return out, nil
}

// provisioningRequest is the request for a workload's provisioned pod
// sets, each with the count its admission took.
func provisioningRequest(wl *musterv1beta1.Workload, check, name string, podSets []string, cfg *musterv1beta1.ProvisioningRequestConfig) *autoscaling.ProvisioningRequest {
	pr := &autoscaling.ProvisioningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: wl.Namespace, Labels: labelsFor(wl.Name, check)},
		Spec: autoscaling.ProvisioningRequestSpec{
			ProvisioningClassName: cfg.Spec.ProvisioningClassName,
			Parameters:            map[string]autoscaling.Parameter{},
		},
	}
	for k, v := range cfg.Spec.Parameters {
		pr.Spec.Parameters[k] = autoscaling.Parameter(v)
	}
	for _, psName := range podSets {
		pr.Spec.PodSets = append(pr.Spec.PodSets, autoscaling.PodSet{
			PodTemplateRef: autoscaling.Reference{Name: templateName(name, psName)},
			Count:          admittedCount(wl, psName),
		})
	}
	return pr
}

// admittedCount is how many pods of a pod set the reservation took.
func admittedCount(wl *musterv1beta1.Workload, podSet string) int32 {
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if psa.Name == podSet && psa.Count != nil {
			return *psa.Count
		}
	}
	for _, ps := range wl.Spec.PodSets {
		if ps.Name == podSet {
			return ps.Count
		}
	}
	return 0
}

func labelsFor(wl, check string) map[string]string {
	l := map[string]string{WorkloadLabel: labelValue(wl)}
	if check != "" {
		l[CheckLabel] = labelValue(check)
	}
	return l
}

// labelValue keeps a name within a label value's 63 characters.
func labelValue(name string) string {
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:52] + "-" + hex.EncodeToString(sum[:])[:10]
}
