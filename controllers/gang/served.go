package gang

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// API is the resource a gang scheduler is known by: Muster hands jobs to
// it only while its API server serves it.
type API struct{ GroupVersion, Resource string }

// APIs are the pod group resources of the gang schedulers. KAI's is made
// by its podgrouper, not by Muster, but is there only where KAI is.
var APIs = map[musterv1beta1.GangSchedulerProvider]API{
	musterv1beta1.GangKubeScheduler: {"scheduling.k8s.io/v1beta1", "podgroups"},
	musterv1beta1.GangVolcano:       {"scheduling.volcano.sh/v1beta1", "podgroups"},
	musterv1beta1.GangCoscheduling:  {"scheduling.x-k8s.io/v1alpha1", "podgroups"},
	musterv1beta1.GangKAI:           {"scheduling.run.ai/v2alpha2", "podgroups"},
}

// Sink is told whether each gang scheduler's API is served
// (controllers/scheduling.State): a ClusterQueue whose gang scheduler is
// missing admits nothing and says why.
type Sink interface {
	SetGangServed(provider string, served bool, detail string)
	// GangsInUse are the gang schedulers some ClusterQueue hands jobs to.
	GangsInUse() []string
}

// ServedChecker asks the API server which gang schedulers' APIs it serves:
// all of them at start, then every Interval those in use (a ClusterQueue
// made to use one is seen within Interval, installing one activates its
// queues within Interval). Discovery, not a watch: the Workload API is
// built in and switched by a feature gate, the others come and go with
// their CRDs.
type ServedChecker struct {
	Discovery discovery.DiscoveryInterface
	Sink      Sink
	Interval  time.Duration
}

// Start implements manager.Runnable; it checks at once, then every
// Interval.
func (c *ServedChecker) Start(ctx context.Context) error {
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	c.CheckAll(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var inUse []musterv1beta1.GangSchedulerProvider
		for _, p := range c.Sink.GangsInUse() {
			if _, known := APIs[musterv1beta1.GangSchedulerProvider(p)]; known {
				inUse = append(inUse, musterv1beta1.GangSchedulerProvider(p))
			}
		}
		c.check(ctx, inUse)
	}
}

// CheckAll asks about every gang scheduler once.
func (c *ServedChecker) CheckAll(ctx context.Context) { c.check(ctx, slices.Sorted(maps.Keys(APIs))) }

func (c *ServedChecker) check(ctx context.Context, providers []musterv1beta1.GangSchedulerProvider) {
	for _, p := range providers {
		served, detail, err := c.served(p)
		if err != nil {
			// Discovery failed for another reason: keep what was known.
			log.FromContext(ctx).V(2).Info("Could not tell whether a gang scheduler is served", "gangScheduler", p, "error", err.Error())
			continue
		}
		c.Sink.SetGangServed(string(p), served, detail)
	}
}

func (c *ServedChecker) served(p musterv1beta1.GangSchedulerProvider) (bool, string, error) {
	api := APIs[p]
	missing := fmt.Sprintf("gang scheduler %s is not installed: the API server does not serve %s %s", p, api.GroupVersion, api.Resource)
	switch p {
	case musterv1beta1.GangKubeScheduler:
		missing += " (kube-apiserver needs --feature-gates=GenericWorkload=true and --runtime-config=scheduling.k8s.io/v1beta1=true)"
	default:
		missing += " (install its CRDs and scheduler)"
	}
	missing += "; or set spec.gangScheduling.provider of the ClusterQueue to another"
	list, err := c.Discovery.ServerResourcesForGroupVersion(api.GroupVersion)
	if apierrors.IsNotFound(err) {
		return false, missing, nil
	}
	if err != nil {
		return false, "", err
	}
	for _, r := range list.APIResources {
		if r.Name == api.Resource {
			return true, "", nil
		}
	}
	return false, missing, nil
}
