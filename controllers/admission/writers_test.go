package admission

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/scheduling"
)

// A cycle decides no more admissions than the writers can take now; the
// rest stay pending, undecided, and once half of them are written the
// writers run the next cycle, which admits them.
func TestCycleAdmitsOnlyWhatItCanWrite(t *testing.T) {
	const n = 2*admissionWriters + 4
	const first = 2 * admissionWriters
	var objs []client.Object
	for i := range n {
		objs = append(objs, gpuWorkload(fmt.Sprintf("w%02d", i), 0, "0"))
	}
	release := make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objs...).WithStatusSubresource(objs...).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				<-release
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	state := preemptingState()
	for _, o := range objs {
		var wl musterv1beta1.Workload
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(o), &wl); err != nil {
			t.Fatal(err)
		}
		state.ApplyWorkload(&wl, nil, time.Now())
	}
	s := newScheduler(c, c, state, events.NewFakeRecorder(100), clocktesting.NewFakeClock(time.Now()), 50)
	s.cycle(context.Background())
	if got := state.Cache.Reserving("cq"); got != first {
		t.Fatalf("first cycle reserved %d, want two per writer while none has written yet (%d)", got, first)
	}
	if got := state.Queues.PendingInClusterQueue("cq"); got != n-first {
		t.Fatalf("%d left pending, want %d", got, n-first)
	}
	drainWake(state)
	s.cycle(context.Background()) // no writer free: decides nothing
	if got := state.Cache.Reserving("cq"); got != first {
		t.Fatalf("a cycle with a full queue reserved %d", got-first)
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !state.Queues.Wait(ctx) {
		t.Fatal("no cycle was woken when the writers finished")
	}
	s.drain()
	s.cycle(context.Background())
	s.drain()
	if got := state.Cache.Reserving("cq"); got != n {
		t.Fatalf("reserved %d after the writers freed, want %d", got, n)
	}
}

// drainWake consumes a pending wake-up so the next Wait sees only new ones.
func drainWake(state *scheduling.State) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	state.Queues.Wait(ctx)
}
