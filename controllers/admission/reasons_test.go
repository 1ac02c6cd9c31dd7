package admission

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/internal/core"
)

// TestReasonWriter: a reason is written once after the grace period however
// often the cycle repeats it, and not at all for a workload admitted within
// the grace period.
func TestReasonWriter(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = musterv1beta1.AddToScheme(scheme)
	mk := func(name string) *musterv1beta1.Workload {
		return &musterv1beta1.Workload{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: musterv1beta1.WorkloadSpec{QueueName: "lq", PodSets: []musterv1beta1.PodSet{{Name: "main", Count: 1,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}}}}}
	}
	waiting, admitted := mk("waiting"), mk("admitted")
	writes := map[string]int{}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(waiting, admitted).WithStatusSubresource(waiting, admitted).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				writes[obj.GetName()]++
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	clk := clocktesting.NewFakeClock(time.Now())
	r := newReasonWriter(c, nil, clk, 50)
	ctx := context.Background()

	for range 100 {
		r.set("ns/waiting", gpusShort("a100", 4, 2))
		r.set("ns/admitted", gpusShort("a100", 4, 2))
	}
	r.forget("ns/admitted") // admitted within the grace period
	writeDue(t, ctx, r, clk, 2)
	r.set("ns/waiting", gpusShort("a100", 4, 2))
	if n := r.queue.Len(); n != 0 {
		t.Fatalf("the same reason again queued %d writes", n)
	}

	var got musterv1beta1.Workload
	if err := c.Get(ctx, client.ObjectKeyFromObject(waiting), &got); err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, musterv1beta1.WorkloadQuotaReserved)
	if want := "waiting for quota: couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in flavor a100: " +
		"4 requested, 2 available (quota 8)"; cond == nil || cond.Message != want {
		t.Fatalf("pending reason = %+v", cond)
	}
	if writes["waiting"] != 1 || writes["admitted"] != 0 {
		t.Fatalf("writes = %v, want one for the waiting workload and none for the admitted one", writes)
	}
}

// A reason whose write conflicts (the workload changed under it) is written
// again on the new version, not dropped until the reason changes.
func TestReasonRetriedAfterAConflict(t *testing.T) {
	wl := gpuWorkload("w", 0, "1")
	conflicts := 1
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(wl).WithStatusSubresource(wl).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				if conflicts > 0 {
					conflicts--
					return apierrors.NewConflict(schema.GroupResource{Resource: "workloads"}, obj.GetName(), errors.New("injected"))
				}
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	clk := clocktesting.NewFakeClock(time.Now())
	r := newReasonWriter(c, nil, clk, 50)
	ctx := context.Background()
	why := gpusShort("a100", 4, 2)
	r.set("ns/w", why)
	writeDue(t, ctx, r, clk, 1) // conflicts: queued again
	writeDue(t, ctx, r, clk, 1)
	var got musterv1beta1.Workload
	if err := c.Get(ctx, client.ObjectKeyFromObject(wl), &got); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, musterv1beta1.WorkloadQuotaReserved); cond == nil || cond.Message != why.Message() {
		t.Fatalf("pending reason = %+v after a conflicting first write", cond)
	}
}

// writeDue steps the clock past the grace period and writes, on this
// goroutine as the writer's worker would, the n reasons that come due: no
// sleeping, and a test knows every write it expects has been tried.
func writeDue(t *testing.T, ctx context.Context, r *reasonWriter, clk *clocktesting.FakeClock, n int) {
	t.Helper()
	clk.Step(reasonGrace + time.Millisecond)
	for range n {
		got := make(chan string, 1)
		go func() { key, _ := r.queue.Get(); got <- key }()
		select {
		case key := <-got:
			r.write(ctx, key)
			r.queue.Done(key)
		case <-time.After(10 * time.Second):
			t.Fatalf("a reason did not come due after the grace period")
		}
	}
}

// gpusShort is the reason of a workload of one pod set short of GPUs in a
// flavor of 8.
func gpusShort(flavor string, need, available int64) core.Pending {
	return core.Pending{Kind: core.NoQuota, NoFit: &core.NoFit{PodSet: "main", Reasons: []core.Reason{
		{Resource: "nvidia.com/gpu", Flavor: flavor, Need: need, Available: available, Quota: 8}}}}
}

// The same reason with other amounts is not rewritten within
// pendingRefresh (available quota moves with every admission); a reason
// short in another flavor is, even one whose name differs only in digits.
func TestReasonWriterSkipsOtherAmounts(t *testing.T) {
	wl := gpuWorkload("w", 0, "4")
	writes := 0
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(wl).WithStatusSubresource(wl).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				writes++
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	clk := clocktesting.NewFakeClock(time.Now())
	r := newReasonWriter(c, nil, clk, 50)
	ctx := context.Background()
	message := func() string {
		var got musterv1beta1.Workload
		if err := c.Get(ctx, client.ObjectKeyFromObject(wl), &got); err != nil {
			t.Fatal(err)
		}
		return meta.FindStatusCondition(got.Status.Conditions, musterv1beta1.WorkloadQuotaReserved).Message
	}
	settle := func() { writeDue(t, ctx, r, clk, 1) }

	first := gpusShort("a100", 4, 2)
	r.set("ns/w", first)
	settle()
	r.set("ns/w", gpusShort("a100", 4, 1))
	settle()
	if writes != 1 || message() != first.Message() {
		t.Fatalf("after other amounts: %d writes, message %q; want 1, %q", writes, message(), first.Message())
	}
	other := gpusShort("a200", 4, 1)
	r.set("ns/w", other)
	settle()
	if writes != 2 || message() != other.Message() {
		t.Fatalf("after another flavor: %d writes, message %q; want 2, %q", writes, message(), other.Message())
	}
}

// Under the client's rate limit, reasons take only the writes the
// scheduler leaves: with its budget drained by admissions (and the floor's
// token used), a reason waits; once the budget refills it goes.
func TestReasonsTakeWhatAdmissionsLeave(t *testing.T) {
	r := newReasonWriter(nil, nil, clock.RealClock{}, 10) // the budget is time's, not the grace period's
	for range 10 {
		r.schedulerWrote()
	}
	r.floor.TryAccept()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.wait(ctx); err == nil {
		t.Fatal("a reason was written from a budget the scheduler had used up")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.wait(ctx); err != nil {
		t.Fatalf("no reason written once the budget refilled: %v", err)
	}
}

// While the scheduler is admitting, reasons go one a second whatever the
// client's budget leaves: each is a status write and an event taken from
// the API server the admissions are using. Quiet, they go at the idle rate.
func TestReasonsGoOneASecondWhileAdmitting(t *testing.T) {
	r := newReasonWriter(nil, nil, clock.RealClock{}, 1000)
	r.schedulerWrote()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.wait(ctx); err != nil {
		t.Fatalf("the first reason while admitting waited: %v", err)
	}
	r.schedulerWrote()
	short, cancelShort := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancelShort()
	if err := r.wait(short); err == nil {
		t.Fatal("a second reason within the same second went while the scheduler was admitting")
	}
	r.lastWrite.Store(0) // the scheduler has been quiet since
	quiet, cancelQuiet := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancelQuiet()
	for i := range 10 {
		if err := r.wait(quiet); err != nil {
			t.Fatalf("reason %d of a quiet scheduler waited: %v", i+1, err)
		}
	}
}

// A pause between admissions shorter than busyWindow is not quiet: a
// backlog is admitted in bursts, and its reasons stay at the busy rate
// through the pauses.
func TestReasonsStayBusyThroughAPause(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	r := newReasonWriter(nil, nil, clk, 1000)
	r.schedulerWrote()
	clk.Step(600 * time.Millisecond) // a backlog admitted two a second
	if !goesWithin(r, 5*time.Second) {
		t.Fatal("the first reason in a pause waited")
	}
	if goesWithin(r, 300*time.Millisecond) {
		t.Fatal("a second reason went in a pause between admissions, as if the scheduler were quiet")
	}
}

// The idle rate saves no burst while the scheduler admits: the first quiet
// moment writes one reason, then the idle rate's next.
func TestQuietSpendsNoSavedBurst(t *testing.T) {
	r := newReasonWriter(nil, nil, clock.RealClock{}, 10) // idle: 2 a second
	if !goesWithin(r, 5*time.Second) {
		t.Fatal("the first reason of a quiet scheduler waited")
	}
	if goesWithin(r, 200*time.Millisecond) {
		t.Fatal("a second reason went at once: the idle rate had saved a burst")
	}
}

// goesWithin reports whether a reason gets its turn to be written within d.
func goesWithin(r *reasonWriter, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return r.wait(ctx) == nil
}
