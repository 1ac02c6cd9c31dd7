package app

import (
	"context"
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
)

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
	raw, err := rc.Get().AbsPath(path).Param("limit", strconv.Itoa(visibilityv1beta1.MaxLimit)).DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var out visibilityv1beta1.PendingWorkloadsSummary
	return &out, json.Unmarshal(raw, &out)
}
