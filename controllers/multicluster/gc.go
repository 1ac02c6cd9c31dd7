package multicluster

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// collector sweeps the workers, every interval, for copies whose workload
// in the manager is gone: deleted while the worker was unreachable, or
// while the manager was down. (A copy whose workload was dispatched
// elsewhere is taken back by the dispatcher as soon as its worker answers
// again: its events bring the workload back.)
type collector struct {
	d     *Dispatcher
	every time.Duration
}

// Start sweeps until ctx is done; an interval of 0 never sweeps.
func (c *collector) Start(ctx context.Context) error {
	if c.every <= 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.sweep(ctx)
		}
	}
}

func (c *collector) sweep(ctx context.Context) {
	for _, rem := range c.d.Pool.all() {
		if !rem.health().usable {
			continue
		}
		var copies musterv1beta1.WorkloadList
		if err := rem.cache.List(ctx, &copies); err != nil {
			log.FromContext(ctx).Error(err, "Cannot list a worker cluster's copies", "cluster", rem.name)
			continue
		}
		for i := range copies.Items {
			key := client.ObjectKeyFromObject(&copies.Items[i])
			var wl musterv1beta1.Workload
			if err := c.d.Client.Get(ctx, key, &wl); client.IgnoreNotFound(err) != nil || err == nil {
				continue
			}
			if err := c.d.removeFrom(ctx, rem, key, nil, false); err != nil {
				log.FromContext(ctx).Error(err, "Cannot take back a copy whose workload is gone", "workload", key, "cluster", rem.name)
			}
		}
	}
}
