package framework

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/workload"
)

// QuotaSampler is the quota-is-never-oversubscribed check the reliability,
// property and soak suites share: it lists a namespace's Workloads every
// Interval and sums what the admitted, unfinished ones hold of Resource,
// per ClusterQueue and in all, against the bounds.
type QuotaSampler struct {
	Client    client.Reader
	Namespace string
	Resource  corev1.ResourceName
	// PerQueue bounds each ClusterQueue's admissions (a queue not listed is
	// unbounded); Total bounds them all (0: unbounded).
	PerQueue map[string]int64
	Total    int64
	// Interval between samples: each lists every Workload of the
	// namespace, so much faster makes the sampler the API server's load.
	Interval time.Duration

	mu         sync.Mutex
	samples    int
	violations int
	first      string
}

// Run samples until ctx ends.
func (s *QuotaSampler) Run(ctx context.Context) {
	for ctx.Err() == nil {
		var wls musterv1beta1.WorkloadList
		if s.Client.List(ctx, &wls, client.InNamespace(s.Namespace)) == nil {
			perQueue, total := Held(wls.Items, s.Resource)
			s.record(s.violation(perQueue, total))
		}
		select {
		case <-ctx.Done():
		case <-time.After(s.Interval):
		}
	}
}

func (s *QuotaSampler) violation(perQueue map[string]int64, total int64) string {
	if s.Total > 0 && total > s.Total {
		return fmt.Sprintf("%d %s admitted in all, at most %d (%v)", total, s.Resource, s.Total, perQueue)
	}
	for cq, n := range perQueue {
		if limit, ok := s.PerQueue[cq]; ok && n > limit {
			return fmt.Sprintf("%d %s admitted in ClusterQueue %s, quota %d (%v)", n, s.Resource, cq, limit, perQueue)
		}
	}
	return ""
}

func (s *QuotaSampler) record(violation string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples++
	if violation == "" {
		return
	}
	s.violations++
	if s.first == "" {
		s.first = fmt.Sprintf("sample %d: %s", s.samples, violation)
	}
}

// Result is how many samples were taken, how many were above a bound, and
// the first of those.
func (s *QuotaSampler) Result() (samples, violations int, first string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.violations, s.first
}

// Check fails the test on a violation and when fewer than minSamples were
// taken (a sampler that never ran proves nothing).
func (s *QuotaSampler) Check(t testing.TB, minSamples int) {
	t.Helper()
	samples, violations, first := s.Result()
	if violations > 0 {
		t.Fatalf("quota oversubscribed in %d of %d samples; first: %s", violations, samples, first)
	}
	if samples < minSamples {
		t.Fatalf("only %d usage samples, want at least %d", samples, minSamples)
	}
	t.Logf("%d usage samples, none above quota", samples)
}

// Held sums what admitted, unfinished Workloads hold of a resource, per
// ClusterQueue and in all.
func Held(wls []musterv1beta1.Workload, res corev1.ResourceName) (perQueue map[string]int64, total int64) {
	perQueue = map[string]int64{}
	for _, wl := range wls {
		if !workload.HoldsQuota(&wl) {
			continue
		}
		for _, psa := range wl.Status.Admission.PodSetAssignments {
			v := psa.ResourceUsage[res]
			perQueue[string(wl.Status.Admission.ClusterQueue)] += v.Value()
			total += v.Value()
		}
	}
	return perQueue, total
}
