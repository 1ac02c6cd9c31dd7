package visibility

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	visibilityv1beta1 "github.com/musterhq/muster/apis/visibility/v1beta1"
	"github.com/musterhq/muster/internal/core"
	"github.com/musterhq/muster/internal/core/queue"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func pendingWl(ns, lq, name string, prio int32, age int) *core.Workload {
	return &core.Workload{Key: ns + "/" + name, Namespace: ns, Name: name, Queue: lq, Priority: prio,
		Created: epoch.Add(time.Duration(age) * time.Second),
		PodSets: []core.PodSet{{Name: "main", Count: 1, Requests: core.Requests{"nvidia.com/gpu": 1}}}}
}

// fixture is a ClusterQueue "gpu" fed by team-a/main and team-b/main, and a
// LocalQueue team-c/lost whose ClusterQueue does not exist.
func fixture() Source {
	q := queue.NewQueues()
	q.UpsertClusterQueue("gpu", core.StrictFIFO)
	q.UpsertLocalQueue("team-a", "main", "gpu")
	q.UpsertLocalQueue("team-b", "main", "gpu")
	q.UpsertLocalQueue("team-c", "lost", "missing")
	q.AddOrUpdate(pendingWl("team-a", "main", "a1", 0, 1))
	q.AddOrUpdate(pendingWl("team-b", "main", "b1", 0, 2))
	q.AddOrUpdate(pendingWl("team-a", "main", "a2", 0, 3))
	q.AddOrUpdate(pendingWl("team-b", "main", "urgent", 100, 9))
	q.AddOrUpdate(pendingWl("team-c", "lost", "c1", 0, 1))
	return Source{Queues: q, Synced: func() bool { return true }, Reason: func(key string) string { return "reason of " + key }}
}

func opts(offset, limit int64) *visibilityv1beta1.PendingWorkloadOptions {
	return &visibilityv1beta1.PendingWorkloadOptions{Offset: offset, Limit: limit}
}

func rows(obj runtime.Object) []string {
	var out []string
	for _, it := range obj.(*visibilityv1beta1.PendingWorkloadsSummary).Items {
		out = append(out, fmt.Sprintf("%s/%s@%d/%d", it.Namespace, it.Name, it.PositionInClusterQueue, it.PositionInLocalQueue))
	}
	return out
}

func TestPendingInClusterQueue(t *testing.T) {
	g := NewWithT(t)
	s := storages(fixture())["clusterqueues/pendingworkloads"].(*pendingInClusterQueue)
	got, err := s.Get(context.Background(), "gpu", opts(0, 10))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows(got)).To(Equal([]string{"team-b/urgent@0/0", "team-a/a1@1/0", "team-b/b1@2/1", "team-a/a2@3/1"}))
	item := got.(*visibilityv1beta1.PendingWorkloadsSummary).Items[0]
	g.Expect(item.Reason).To(Equal("reason of team-b/urgent"))
	g.Expect(item.Priority).To(BeEquivalentTo(100))
	g.Expect(item.LocalQueueName).To(Equal("main"))
	g.Expect(item.CreationTimestamp.Time).To(Equal(epoch.Add(9 * time.Second)))

	got, err = s.Get(context.Background(), "gpu", opts(1, 2))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rows(got)).To(Equal([]string{"team-a/a1@1/0", "team-b/b1@2/1"}))

	_, err = s.Get(context.Background(), "nope", opts(0, 10))
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "an unknown ClusterQueue: %v", err)
}

func TestPendingInLocalQueue(t *testing.T) {
	s := storages(fixture())["localqueues/pendingworkloads"].(*pendingInLocalQueue)
	for _, tc := range []struct {
		name, namespace, queue string
		offset, limit          int64
		want                   []string
		notFound               bool
	}{
		{name: "positions in both", namespace: "team-a", queue: "main", limit: 10, want: []string{"team-a/a1@1/0", "team-a/a2@3/1"}},
		{name: "a page", namespace: "team-b", queue: "main", offset: 1, limit: 1, want: []string{"team-b/b1@2/1"}},
		{name: "no ClusterQueue yet", namespace: "team-c", queue: "lost", limit: 10, want: []string{"team-c/c1@-1/0"}},
		{name: "another namespace's name", namespace: "team-c", queue: "main", limit: 10, notFound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := genericapirequest.WithNamespace(context.Background(), tc.namespace)
			got, err := s.Get(ctx, tc.queue, opts(tc.offset, tc.limit))
			if tc.notFound {
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rows(got)).To(Equal(tc.want))
		})
	}
}

// TestNotLeadingIsUnavailable: a replica whose queues are not complete
// says so (503) instead of answering with an empty or partial list.
func TestNotLeadingIsUnavailable(t *testing.T) {
	g := NewWithT(t)
	src := fixture()
	src.Synced = func() bool { return false }
	for path, st := range storages(src) {
		getter, ok := st.(interface {
			Get(context.Context, string, runtime.Object) (runtime.Object, error)
		})
		if !ok {
			continue
		}
		ctx := genericapirequest.WithNamespace(context.Background(), "team-a")
		_, err := getter.Get(ctx, "gpu", opts(0, 10))
		g.Expect(apierrors.IsServiceUnavailable(err)).To(BeTrue(), "%s: %v", path, err)
	}
}

func TestPageBounds(t *testing.T) {
	g := NewWithT(t)
	offset, limit, err := pageOf(opts(0, 10*visibilityv1beta1.MaxLimit))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(offset).To(Equal(0))
	g.Expect(limit).To(Equal(visibilityv1beta1.MaxLimit), "a limit above the maximum is the maximum")
	_, _, err = pageOf(opts(-1, 10))
	g.Expect(apierrors.IsBadRequest(err)).To(BeTrue())
}

// TestQueryParameters: the scheme decodes ?limit=&offset= as the API
// server's parameter codec will, with the default limit when absent and a
// clear error for what is not a number.
func TestQueryParameters(t *testing.T) {
	for _, tc := range []struct {
		query         string
		offset, limit int64
		err           bool
	}{
		{query: "", limit: visibilityv1beta1.DefaultLimit},
		{query: "limit=5&offset=2", offset: 2, limit: 5},
		{query: "limit=five", err: true},
		{query: "offset=-3", err: true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			g := NewWithT(t)
			q, err := url.ParseQuery(tc.query)
			g.Expect(err).NotTo(HaveOccurred())
			// As the API server does: the defaults from NewGetOptions, then
			// the query, if any, decoded onto them.
			def, _, _ := pendingWorkloads{}.NewGetOptions()
			o := def.(*visibilityv1beta1.PendingWorkloadOptions)
			err = runtime.NewParameterCodec(scheme).DecodeParameters(q, visibilityv1beta1.GroupVersion, o)
			if tc.err {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(o.Offset).To(Equal(tc.offset))
			g.Expect(o.Limit).To(Equal(tc.limit))
		})
	}
}
