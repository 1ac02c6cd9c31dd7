package visibility

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/musterhq/muster/internal/core"
)

// BenchmarkPendingWorkloads100k answers the two subresources for a
// ClusterQueue of 100,000 pending workloads over 100 LocalQueues, a page of
// the default 1,000: what the API costs the manager per request (the API
// server's proxying and JSON encoding come on top; the integration test
// measures nothing).
func BenchmarkPendingWorkloads100k(b *testing.B) {
	q := core.NewQueues()
	q.UpsertClusterQueue("gpu", core.BestEffortFIFO)
	for i := range 100 {
		q.UpsertLocalQueue("team", fmt.Sprintf("lq%d", i), "gpu")
	}
	for i := range 100000 {
		q.AddOrUpdate(pendingWl("team", fmt.Sprintf("lq%d", i%100), fmt.Sprintf("w%d", i), int32(i%7), i))
	}
	src := Source{Queues: q, Synced: func() bool { return true }, Reason: func(string) string { return "insufficient quota" }}
	st := storages(src)
	cq := st["clusterqueues/pendingworkloads"].(*pendingInClusterQueue)
	lq := st["localqueues/pendingworkloads"].(*pendingInLocalQueue)
	ctx := genericapirequest.WithNamespace(context.Background(), "team")
	b.Run("clusterqueue", func(b *testing.B) {
		for b.Loop() {
			if _, err := cq.Get(ctx, "gpu", opts(0, 1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("clusterqueue/json", func(b *testing.B) {
		// The page as the API server's JSON serializer writes it.
		for b.Loop() {
			obj, err := cq.Get(ctx, "gpu", opts(0, 1000))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(obj); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("clusterqueue/last-page", func(b *testing.B) {
		for b.Loop() {
			if _, err := cq.Get(ctx, "gpu", opts(99000, 1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("localqueue", func(b *testing.B) {
		for b.Loop() {
			if _, err := lq.Get(ctx, "lq42", opts(0, 1000)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
