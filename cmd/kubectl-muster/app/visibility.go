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
	return pending(ctx, o, "/apis/visibility.muster.dev/v1beta1/namespaces/"+namespace+"/localqueues/"+name+"/pendingworkloads")
}

func pending(ctx context.Context, o *Options, path string) (*visibilityv1beta1.PendingWorkloadsSummary, error) {
	cfg, err := o.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &visibilityv1beta1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(Scheme).WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	var raw []byte
	// A replica that is starting (or, before Muster served the API on every
	// replica, a follower) answers 503: another try may reach one that is
	// ready behind the same Service.
	err = retry.OnError(unavailableBackoff, apierrors.IsServiceUnavailable, func() error {
		var err error
		raw, err = rc.Get().AbsPath(path).Param("limit", strconv.Itoa(visibilityv1beta1.MaxLimit)).DoRaw(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	var out visibilityv1beta1.PendingWorkloadsSummary
	return &out, json.Unmarshal(raw, &out)
}
