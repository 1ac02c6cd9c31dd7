package provisioning

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Retry defaults, Kueue's: a config that sets no retryStrategy (or leaves
// a field out when created without the CRD's defaults) gets these.
const (
	defaultBackoffLimit = 3
	defaultBackoffBase  = 60
	defaultBackoffMax   = 1800
)

// answer is what a ProvisioningRequest's conditions say of the check:
// the state, the message, and for Ready what the pods get; for Retry how
// long to wait.
type answer struct {
	state   musterv1beta1.CheckState
	message string
	updates []musterv1beta1.PodSetUpdate
	backoff time.Duration
}

// request is what the answer is computed from: the workload's request,
// where it stands, and the config.
type request struct {
	pr     *autoscaling.ProvisioningRequest
	cfg    *musterv1beta1.ProvisioningRequestConfig
	podSet []string // the pod sets it provisions
	// attempt is the request's attempt number, from 1.
	attempt int32
	// admitted: the workload's job may have started; podsReady: its pods
	// all ran.
	admitted, podsReady bool
}

// answerOf maps a ProvisioningRequest's conditions to the check's state.
// Failed retries with a doubling backoff, then rejects past the config's
// retry limit. Capacity lost before the pods ran (the booking expired
// before the job was admitted, or the capacity was revoked before its pods
// were all ready) retries the same way: the nodes the job was promised are
// gone. Provisioned is Ready, with the annotations that let the pods
// consume the request. Otherwise the check waits, saying why.
func answerOf(r request) answer {
	conds := r.pr.Status.Conditions
	switch {
	case meta.IsStatusConditionTrue(conds, autoscaling.Failed):
		return r.failed(conditionMessage(conds, autoscaling.Failed))
	case meta.IsStatusConditionTrue(conds, autoscaling.CapacityRevoked) && !r.podsReady:
		return r.failed("capacity revoked: " + conditionMessage(conds, autoscaling.CapacityRevoked))
	case meta.IsStatusConditionTrue(conds, autoscaling.BookingExpired) && !r.admitted:
		return r.failed("booking expired before the job started: " + conditionMessage(conds, autoscaling.BookingExpired))
	case meta.IsStatusConditionTrue(conds, autoscaling.Provisioned):
		return answer{state: musterv1beta1.CheckStateReady, updates: r.podSetUpdates(),
			message: fmt.Sprintf("ProvisioningRequest %s is provisioned", r.pr.Name)}
	}
	msg := fmt.Sprintf("Waiting for ProvisioningRequest %s (attempt %d)", r.pr.Name, r.attempt)
	for _, t := range []string{autoscaling.Provisioned, autoscaling.Accepted} {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Message != "" {
			return answer{state: musterv1beta1.CheckStatePending, message: msg + ": " + c.Message}
		}
	}
	return answer{state: musterv1beta1.CheckStatePending, message: msg}
}

// failed is Retry with the attempt's backoff, or Rejected once the retries
// are used up.
func (r request) failed(why string) answer {
	rs := r.cfg.Spec.RetryStrategy
	if rs == nil {
		rs = &musterv1beta1.ProvisioningRequestRetryStrategy{}
	}
	limit := ptr.Deref(rs.BackoffLimitCount, defaultBackoffLimit)
	msg := fmt.Sprintf("ProvisioningRequest %s failed: %s", r.pr.Name, why)
	if r.attempt > limit {
		return answer{state: musterv1beta1.CheckStateRejected,
			message: fmt.Sprintf("%s (attempt %d of %d, no retry left)", msg, r.attempt, limit+1)}
	}
	base := time.Duration(ptr.Deref(rs.BackoffBaseSeconds, defaultBackoffBase)) * time.Second
	maxBackoff := time.Duration(ptr.Deref(rs.BackoffMaxSeconds, defaultBackoffMax)) * time.Second
	backoff := base
	for i := int32(1); i < r.attempt && backoff < maxBackoff; i++ {
		backoff *= 2
	}
	backoff = min(backoff, maxBackoff)
	return answer{state: musterv1beta1.CheckStateRetry, backoff: backoff,
		message: fmt.Sprintf("%s (attempt %d of %d, retried in %s)", msg, r.attempt, limit+1, backoff)}
}

// podSetUpdates are what each provisioned pod set's pods get: the
// annotations that make them consume the request (the autoscaler holds
// the nodes for them), and the node selectors the config takes from the
// request's details.
func (r request) podSetUpdates() []musterv1beta1.PodSetUpdate {
	selector := map[string]string{}
	if u := r.cfg.Spec.PodSetUpdates; u != nil {
		for _, ns := range u.NodeSelector {
			if v, ok := r.pr.Status.ProvisioningClassDetails[ns.ValueFromProvisioningClassDetail]; ok {
				selector[ns.Key] = string(v)
			}
		}
	}
	out := make([]musterv1beta1.PodSetUpdate, 0, len(r.podSet))
	for _, name := range r.podSet {
		u := musterv1beta1.PodSetUpdate{Name: name, Annotations: map[string]string{
			autoscaling.ProvisioningRequestPodAnnotationKey: r.pr.Name,
			autoscaling.ProvisioningClassPodAnnotationKey:   r.pr.Spec.ProvisioningClassName,
		}}
		if len(selector) > 0 {
			u.NodeSelector = selector
		}
		out = append(out, u)
	}
	return out
}

func conditionMessage(conds []metav1.Condition, typ string) string {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		if c.Message != "" {
			return c.Message
		}
		return c.Reason
	}
	return ""
}
