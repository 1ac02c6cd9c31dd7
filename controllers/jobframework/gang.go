package jobframework

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

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
}

// JobWithGangMinimum is implemented by kinds whose operator (or KAI's
// podgrouper) makes the pod group from a field of the job, e.g. a
// PyTorchJob's runPolicy.schedulingPolicy.minAvailable: Muster sets it to
// the admitted pod count instead of creating a pod group itself.
type JobWithGangMinimum interface {
	SetGangMinimum(pods int32)
}

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
// added, so that unmarkGang removes only those.
func markGang(t *corev1.PodTemplateSpec, g *GangInfo) {
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
	v, found := obj.GetAnnotations()[musterv1beta1.JobMinParallelismAnnotation]
	if !found {
		v, found = obj.GetAnnotations()[musterv1beta1.KueuePrefix+"job-min-parallelism"]
	}
	if !found {
		return 0, false, nil
	}
	i, err := strconv.ParseInt(v, 10, 32)
	if err != nil || i < 1 {
		return 0, true, fmt.Errorf("must be a positive integer, not %q", v)
	}
	return int32(i), true, nil
}
