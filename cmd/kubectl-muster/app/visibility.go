package app

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
)

// unavailableBackoff spaces the tries of a visibility request answered 503:
// four in about 1.5 s.
var unavailableBackoff = wait.Backoff{Steps: 4, Duration: 200 * time.Millisecond, Factor: 2}

// pendingInLocalQueue asks visibility.muster.dev for a LocalQueue's
// pending workloads (all of them, up to the API's maximum).
func pendingInLocalQueue(ctx context.Context, o *Options, namespace, name string) (*visibilityv1beta1.PendingWorkloadsSummary, error) {
	var out visibilityv1beta1.PendingWorkloadsSummary
	path := "/apis/visibility.muster.dev/v1beta1/namespaces/" + namespace + "/localqueues/" + name + "/pendingworkloads"
	return &out, getVisibility(ctx, o, path, map[string]string{"limit": strconv.Itoa(visibilityv1beta1.MaxLimit)}, &out)
}

// explanationOf asks visibility.muster.dev for the scheduler's answer on
// one pending workload.
func explanationOf(ctx context.Context, o *Options, namespace, name string) (*visibilityv1beta1.WorkloadExplanation, error) {
	var out visibilityv1beta1.WorkloadExplanation
	path := "/apis/visibility.muster.dev/v1beta1/namespaces/" + namespace + "/workloads/" + name + "/explanation"
	return &out, getVisibility(ctx, o, path, nil, &out)
}

func getVisibility(ctx context.Context, o *Options, path string, params map[string]string, out any) error {
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &visibilityv1beta1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(Scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return err
	}
	var raw []byte
	// A replica that is starting answers 503: another try may reach one
	// that is ready behind the same Service.
	err = retry.OnError(unavailableBackoff, apierrors.IsServiceUnavailable, func() error {
		req := rc.Get().AbsPath(path)
		for k, v := range params {
			req = req.Param(k, v)
		}
		var err error
		raw, err = req.DoRaw(ctx)
		return err
	})
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
