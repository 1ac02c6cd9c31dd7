package jobframework

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Gang hands admitted jobs to a gang scheduler; controllers/gang
// implements it. The reconciler calls Start before it unsuspends a job and
// Stop once the job is stopped or finished.
type Gang interface {
	// Start creates what the gang scheduler of the workload's ClusterQueue
	// needs (pod groups) and fills each info's Gang marks for the pod
	// templates. framework is the job's kind (integrations.frameworks).
	Start(ctx context.Context, job GenericJob, framework string, wl *musterv1beta1.Workload, infos []PodSetInfo) error
	// Stop deletes what Start created for the workload under the provider
	// its pod templates were marked with.
	Stop(ctx context.Context, wl *musterv1beta1.Workload, provider musterv1beta1.GangSchedulerProvider) error
	// Shrink lowers the minimum of the pod groups Start created to what
	// the running job still has to run (JobWithPodsToRun), so that its
	// last pods are not held for a gang that can no longer form.
	Shrink(ctx context.Context, job GenericJob, framework string, wl *musterv1beta1.Workload, toRun []int32) error
}

// JobWithPodsToRun is implemented by kinds whose pods run in waves (a
// batch/v1 Job with more completions than parallelism replaces finished
// pods one by one): a gang of all admitted pods would hold the last ones
// forever once fewer remain to run.
type JobWithPodsToRun interface {
	// PodsToRun is, per pod set, how many pods the job still runs at once
	// at most: its admitted count until its remaining work is smaller.
	PodsToRun() []int32
}

// JobWithGangMinimum is implemented by kinds whose operator (or KAI's
// podgrouper) makes the pod group from a field of the job, e.g. a
// PyTorchJob's runPolicy.schedulingPolicy.minAvailable: Muster sets it to
// the admitted pod count instead of creating a pod group itself.
type JobWithGangMinimum interface {
	// SetGangMinimum sets the group's minimum (and, when not "", the gang
	// scheduler's queue, unless the job names one).
	SetGangMinimum(pods int32, queue string)
}

// RetryAfterError is a start that must wait (a pod group of an earlier
// admission still being deleted): the job is looked at again after After,
// without the error backoff.
type RetryAfterError struct {
	After  time.Duration
	Reason string
}

func (e *RetryAfterError) Error() string { return e.Reason }

// GangInfo is what a gang scheduler needs on a pod set's pods: labels and
// annotations added to the pod template (a key the template already has
// is left as it is: its owner brought its own group).
type GangInfo struct {
	Labels, Annotations map[string]string
}

// GangProviderOf is the gang scheduler a started job's pod templates were
// handed to, or "" when none.
func GangProviderOf(job GenericJob) musterv1beta1.GangSchedulerProvider {
	for _, ps := range job.PodSets() {
		if p := ps.Template.Labels[musterv1beta1.GangProviderLabel]; p != "" {
			return musterv1beta1.GangSchedulerProvider(p)
		}
	}
	return ""
}

// markGang adds the gang marks a template lacks and records which it
// added, so that unmarkGang removes only those. Marks of an earlier start
// (a job re-applied from its own YAML) are dropped first.
func markGang(t *corev1.PodTemplateSpec, g *GangInfo) {
	unmarkGang(t)
	var added []string
	add := func(m *map[string]string, prefix string, kv map[string]string) {
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			if _, ok := (*m)[k]; ok {
				continue
			}
			if *m == nil {
				*m = map[string]string{}
			}
			(*m)[k] = kv[k]
			added = append(added, prefix+k)
		}
	}
	add(&t.Labels, "l:", g.Labels)
	add(&t.Annotations, "a:", g.Annotations)
	if len(added) > 0 {
		t.Annotations[musterv1beta1.GangAddedAnnotation] = strings.Join(added, ",")
	}
}

// unmarkGang removes the marks markGang added, reporting whether there
// were any.
func unmarkGang(t *corev1.PodTemplateSpec) bool {
	list, ok := t.Annotations[musterv1beta1.GangAddedAnnotation]
	if !ok {
		return false
	}
	for _, key := range strings.Split(list, ",") {
		switch {
		case strings.HasPrefix(key, "l:"):
			delete(t.Labels, key[2:])
		case strings.HasPrefix(key, "a:"):
			delete(t.Annotations, key[2:])
		}
	}
	delete(t.Annotations, musterv1beta1.GangAddedAnnotation)
	return true
}

// MinParallelism is the job-min-parallelism annotation of a job (Muster's,
// else Kueue's): the fewest pods it may be admitted with. ok is false when
// it has none; err says why a value is not a positive integer.
func MinParallelism(obj client.Object) (n int32, ok bool, err error) {
	key := MinParallelismKey(obj)
	if key == "" {
		return 0, false, nil
	}
	v := obj.GetAnnotations()[key]
	i, err := strconv.ParseInt(v, 10, 32)
	if err != nil || i < 1 {
		return 0, true, fmt.Errorf("must be a positive integer, not %q", v)
	}
	return int32(i), true, nil
}

// MinParallelismKey is the annotation the job's job-min-parallelism is
// read from, Muster's or Kueue's, so an error names what the user wrote;
// "" when it has neither.
func MinParallelismKey(obj client.Object) string {
	for _, key := range []string{musterv1beta1.JobMinParallelismAnnotation, musterv1beta1.KueuePrefix + "job-min-parallelism"} {
		if _, ok := obj.GetAnnotations()[key]; ok {
			return key
		}
	}
	return ""
}

// OriginalCountsAnnotation keeps, on a job started with fewer pods than it
// asks (partial admission), the count fields Muster changed, the value each
// had and the value Muster set: "<field>=<original>@<set>,..." (an empty
// original for unset). Stopping the job puts back exactly those, and only
// where the field still holds what Muster set: a count the user changed
// since is theirs.
const OriginalCountsAnnotation = "muster.dev/original-counts"

// SetCount sets a count field of a job to n, remembering the value it
// replaced the first time, and n.
func SetCount(obj client.Object, field string, p **int32, n int32) {
	counts := parseCounts(obj.GetAnnotations()[OriginalCountsAnnotation])
	orig, kept := counts[field]
	if !kept {
		orig = countString(*p)
	}
	orig, _, _ = strings.Cut(orig, "@")
	counts[field] = orig + "@" + strconv.Itoa(int(n))
	setAnnotation(obj, OriginalCountsAnnotation, formatCounts(counts))
	*p = &n
}

// RestoreCount puts back a count field SetCount changed, unless the user
// has changed it since, reporting whether the job changed (the field, or
// only the annotation).
func RestoreCount(obj client.Object, field string, p **int32) bool {
	counts := parseCounts(obj.GetAnnotations()[OriginalCountsAnnotation])
	v, kept := counts[field]
	if !kept {
		return false
	}
	orig, set, hasSet := strings.Cut(v, "@")
	if !hasSet || countString(*p) == set {
		*p = parseCount(orig)
	}
	delete(counts, field)
	if len(counts) == 0 {
		a := obj.GetAnnotations()
		delete(a, OriginalCountsAnnotation)
		obj.SetAnnotations(a)
	} else {
		setAnnotation(obj, OriginalCountsAnnotation, formatCounts(counts))
	}
	return true
}

// countString is a count field as the annotation writes it ("" unset).
func countString(p *int32) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(int(*p))
}

// parseCount is the count field an annotation value stands for.
func parseCount(s string) *int32 {
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil
	}
	m := int32(n)
	return &m
}

func parseCounts(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

func formatCounts(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func setAnnotation(obj client.Object, k, v string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k] = v
	obj.SetAnnotations(a)
}

// setGangQueueAnnotation marks a gang queue Muster set on a job that named
// none, so that stopping the job clears it.
const setGangQueueAnnotation = "muster.dev/set-gang-queue"

// SetGangPolicy sets a job's own pod-group fields (a Kubeflow job's
// runPolicy.schedulingPolicy), from which its operator or KAI's podgrouper
// makes the pod group: minAvailable to the admitted pod count, and the gang
// scheduler's queue to queue when the job names none. RestoreGangPolicy
// undoes both.
func SetGangPolicy(obj client.Object, minAvailable **int32, queue *string, pods int32, gangQueue string) {
	SetCount(obj, "minAvailable", minAvailable, pods)
	if gangQueue != "" && *queue == "" {
		*queue = gangQueue
		setAnnotation(obj, setGangQueueAnnotation, "true")
	}
}

// RestoreGangPolicy puts back what SetGangPolicy replaced, reporting
// whether the job changed.
func RestoreGangPolicy(obj client.Object, minAvailable **int32, queue *string) bool {
	changed := RestoreCount(obj, "minAvailable", minAvailable)
	if a := obj.GetAnnotations(); a[setGangQueueAnnotation] != "" {
		*queue = ""
		delete(a, setGangQueueAnnotation)
		obj.SetAnnotations(a)
		changed = true
	}
	return changed
}
