package provisioning

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

func requestWith(conds ...string) *autoscaling.ProvisioningRequest {
	pr := &autoscaling.ProvisioningRequest{ObjectMeta: metav1.ObjectMeta{Name: "wl-prov-1"},
		Spec: autoscaling.ProvisioningRequestSpec{ProvisioningClassName: autoscaling.ProvisioningClassBestEffortAtomicScaleUp}}
	for _, c := range conds {
		pr.Status.Conditions = append(pr.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: c, Message: c + " says so"})
	}
	return pr
}

func configWith(limit, base, maxSeconds int32) *musterv1beta1.ProvisioningRequestConfig {
	return &musterv1beta1.ProvisioningRequestConfig{Spec: musterv1beta1.ProvisioningRequestConfigSpec{
		RetryStrategy: &musterv1beta1.ProvisioningRequestRetryStrategy{
			BackoffLimitCount: ptr.To(limit), BackoffBaseSeconds: ptr.To(base), BackoffMaxSeconds: ptr.To(maxSeconds)}}}
}

// TestAnswerOfMapsTheRequestsConditions is the table of
// docs/admission-checks.md: what each state of the request makes the check.
func TestAnswerOfMapsTheRequestsConditions(t *testing.T) {
	const (
		pending  = musterv1beta1.CheckStatePending
		ready    = musterv1beta1.CheckStateReady
		retry    = musterv1beta1.CheckStateRetry
		rejected = musterv1beta1.CheckStateRejected
	)
	cfg := configWith(2, 10, 25)
	for name, tc := range map[string]struct {
		pr                  *autoscaling.ProvisioningRequest
		attempt             int32
		admitted, podsReady bool
		want                musterv1beta1.CheckState
		wantBackoff         time.Duration
		wantMsg             string
	}{
		"accepted, waiting":                                           {pr: requestWith(autoscaling.Accepted), attempt: 1, want: pending, wantMsg: "Accepted says so"},
		"provisioned":                                                 {pr: requestWith(autoscaling.Accepted, autoscaling.Provisioned), attempt: 1, want: ready},
		"failed, first attempt: base backoff":                         {pr: requestWith(autoscaling.Failed), attempt: 1, want: retry, wantBackoff: 10 * time.Second, wantMsg: "Failed says so"},
		"failed, second attempt: doubled":                             {pr: requestWith(autoscaling.Failed), attempt: 2, want: retry, wantBackoff: 20 * time.Second},
		"failed past the limit: rejected":                             {pr: requestWith(autoscaling.Failed), attempt: 3, want: rejected, wantMsg: "no retry left"},
		"booking expired before admission":                            {pr: requestWith(autoscaling.Provisioned, autoscaling.BookingExpired), attempt: 1, want: retry, wantBackoff: 10 * time.Second, wantMsg: "booking expired"},
		"booking expired once admitted: ignored":                      {pr: requestWith(autoscaling.Provisioned, autoscaling.BookingExpired), attempt: 1, admitted: true, want: ready},
		"capacity revoked before the pods ran":                        {pr: requestWith(autoscaling.Provisioned, autoscaling.CapacityRevoked), attempt: 1, admitted: true, want: retry, wantBackoff: 10 * time.Second, wantMsg: "capacity revoked"},
		"capacity revoked once the pods all ran":                      {pr: requestWith(autoscaling.Provisioned, autoscaling.CapacityRevoked), attempt: 1, admitted: true, podsReady: true, want: ready},
		"backoff capped at the maximum (attempt 3 of a bigger limit)": {pr: requestWith(autoscaling.Failed), attempt: 3, want: retry, wantBackoff: 25 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			c := cfg
			if strings.HasPrefix(name, "backoff capped") {
				c = configWith(5, 10, 25)
			}
			a := answerOf(request{pr: tc.pr, cfg: c, podSet: []string{"main"}, attempt: tc.attempt, admitted: tc.admitted, podsReady: tc.podsReady})
			if a.state != tc.want || a.backoff != tc.wantBackoff || !strings.Contains(a.message, tc.wantMsg) {
				t.Fatalf("answer = %s after %s: %q; want %s after %s containing %q", a.state, a.backoff, a.message, tc.want, tc.wantBackoff, tc.wantMsg)
			}
			if a.state == ready && (len(a.updates) != 1 || a.updates[0].Annotations[autoscaling.ProvisioningRequestPodAnnotationKey] != "wl-prov-1") {
				t.Errorf("ready without the consume annotation: %+v", a.updates)
			}
		})
	}
}

func TestProvisionedNodeSelectorComesFromTheClassDetails(t *testing.T) {
	cfg := configWith(3, 60, 1800)
	cfg.Spec.PodSetUpdates = &musterv1beta1.ProvisioningRequestPodSetUpdates{NodeSelector: []musterv1beta1.ProvisioningRequestPodSetUpdatesNodeSelector{
		{Key: "cloud.example.com/node-group", ValueFromProvisioningClassDetail: "nodeGroup"}}}
	pr := requestWith(autoscaling.Provisioned)
	pr.Status.ProvisioningClassDetails = map[string]autoscaling.Detail{"nodeGroup": "pool-7"}
	a := answerOf(request{pr: pr, cfg: cfg, podSet: []string{"launcher", "workers"}, attempt: 1})
	if len(a.updates) != 2 || a.updates[1].NodeSelector["cloud.example.com/node-group"] != "pool-7" {
		t.Fatalf("updates = %+v, want both pod sets selecting pool-7", a.updates)
	}
}

func TestRequestNamesStayWithinAnObjectName(t *testing.T) {
	long := strings.Repeat("w", 250)
	if n := requestName(long, "prov", 1); len(n) > 253 || n == requestName(long, "prov", 2) {
		t.Errorf("name %q (%d characters) is too long or not unique per attempt", n, len(n))
	}
	if v := labelValue(long); len(v) > 63 {
		t.Errorf("label value of %d characters", len(v))
	}
}
