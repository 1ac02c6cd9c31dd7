package jobframework

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Kind describes one job kind to the job framework: the generic reconciler
// and webhook use it typed, the registry through Kind.Integration.
type Kind[T client.Object] struct {
	// Framework is the name used in the component config, e.g. batch/job.
	Framework string
	// EnabledByDefault enables the kind when integrations.frameworks is not
	// set. Leave it false for a new kind: users opt in by listing it.
	EnabledByDefault bool
	// GVK is the job's group, version and kind.
	GVK schema.GroupVersionKind
	// AddToScheme adds the job's Go types to a scheme.
	AddToScheme func(*runtime.Scheme) error
	// CRD is where the kind's CRD is published, nil for a built-in kind.
	// make job-crds copies it for the integration tests.
	CRD *CRDSource
	// New returns an empty job object.
	New func() T
	// Adapt wraps a job object in the GenericJob interface.
	Adapt func(T) GenericJob
	// PodIndexLabel is the pod label holding a pod's index in its pod set
	// (a Job's completion index), if the kind has one: the topology
	// ungater gives neighbouring indexes neighbouring nodes.
	PodIndexLabel string
	// SubGroupIndexLabel is the pod label holding the index of a pod's
	// sub-group when PodIndexLabel numbers pods within sub-groups (a
	// JobSet's child Jobs each count their pods from 0): the ungater orders
	// pods by it first, so each sub-group fills its own slice.
	SubGroupIndexLabel string
	// HandledElsewhere, when set, picks the objects the kind's generic
	// reconciler leaves to another controller of the kind (a pod group's
	// pods: one Workload for all of them). The webhook still gates them.
	HandledElsewhere func(T) bool
	// WebhookPaths, when set, are the webhooks' paths instead of those the
	// GVK gives (/mutate-<group>-<version>-<kind>): a kind whose GVK path
	// another webhook serves (Pods: the gang webhook's).
	WebhookPaths *WebhookPaths
	// MultiCluster, when set, lets a muster.dev/multicluster check run the
	// kind's jobs in worker clusters (docs/multi-cluster.md).
	MultiCluster *MultiCluster
}

// WebhookPaths are a kind's mutating and validating webhook paths.
type WebhookPaths struct {
	Mutate, Validate string
}

// CRDSource is a CRD file inside a Go module that go.mod pins (the
// operator's API module): nothing is downloaded but modules.
type CRDSource struct {
	// Module is the module path, e.g. github.com/ray-project/kuberay/ray-operator.
	Module string
	// Version is the module's version when go.mod does not pin it: a kind
	// whose Go types Muster does not import (TrainJob, read unstructured).
	Version string
	// Path is the CRD file inside the module.
	Path string
	// Related are the CRD files of the other objects the kind's jobs read
	// (a TrainJob's training runtimes), installed beside it.
	Related []string
}

// Options are the component-config switches the generic code honours.
type Options struct {
	// AcceptKueueQueueLabel also takes a job's queue from Kueue's label.
	AcceptKueueQueueLabel bool
	// ManagerNamespace is skipped by the job webhooks.
	ManagerNamespace string
	// ManagedNamespaces selects the namespaces whose jobs are gated
	// (managedJobsNamespaceSelector); nil selects all.
	ManagedNamespaces labels.Selector
	// PodsReady configures waitForPodsReady.
	PodsReady PodsReadyOptions
	// Clock is the time source; tests inject a fake one.
	Clock clock.Clock
	// Gang hands admitted jobs to a gang scheduler; nil hands them to
	// their pods' scheduler as they are.
	Gang Gang
	// ParentKinds are the enabled kinds (the registry fills it): a job
	// whose controller is one of them is that job's part, not a job of its
	// own.
	ParentKinds map[schema.GroupKind]bool
}

// PodsReadyOptions is waitForPodsReady: an admitted job whose pods are not
// all ready within Timeout is evicted and requeued after a backoff.
type PodsReadyOptions struct {
	Enable  bool
	Timeout time.Duration
	// RecoveryTimeout is how long pods that were all ready may stay not
	// ready; nil never evicts for that.
	RecoveryTimeout *time.Duration
	// BackoffBase is the first requeue delay; it doubles up to BackoffMax.
	BackoffBase, BackoffMax time.Duration
	// BackoffLimit deactivates the workload after this many requeues; nil
	// requeues forever.
	BackoffLimit *int32
}

// Manages reports whether Muster gates the jobs of a namespace: never the
// control plane's or its own, whatever their labels, and otherwise those of
// the namespaces managedJobsNamespaceSelector selects. The job webhooks'
// namespaceSelector should say the same; this covers a configuration
// without it, and the reconciler, which every job event reaches.
func (o Options) Manages(ctx context.Context, r client.Reader, namespace string) (bool, error) {
	if namespace == "kube-system" || namespace == o.ManagerNamespace {
		return false, nil
	}
	if o.ManagedNamespaces == nil || o.ManagedNamespaces.Empty() {
		return true, nil
	}
	var ns corev1.Namespace
	if err := r.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return o.ManagedNamespaces.Matches(labels.Set(ns.Labels)), nil
}

// QueueName returns the LocalQueue a job names, or "".
//
// A job controlled by a job Muster manages names none, whatever its labels:
// its parent holds the quota for it (a RayJob's RayCluster and submitter
// Job copy the RayJob's labels, the queue label among them, and gating them
// too would hold the RayJob's own pods back from the quota it was given).
func QueueName(obj client.Object, opts Options) string {
	if opts.hasManagedParent(obj) {
		return ""
	}
	l := obj.GetLabels()
	if q := l[musterv1beta1.QueueNameLabel]; q != "" {
		return q
	}
	if opts.AcceptKueueQueueLabel {
		return l[musterv1beta1.KueueQueueNameLabel]
	}
	return ""
}

// hasManagedParent reports whether obj's controller is of an enabled kind.
func (o Options) hasManagedParent(obj client.Object) bool {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || len(o.ParentKinds) == 0 {
		return false
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	return err == nil && o.ParentKinds[gv.WithKind(owner.Kind).GroupKind()]
}

// WorkloadName is the deterministic name of a job's Workload: the kind and
// job name for humans, a hash of the job's UID for uniqueness across
// recreations of a job with the same name.
func WorkloadName(kind, jobName string, uid types.UID) string {
	sum := sha256.Sum256([]byte(kind + "/" + string(uid)))
	hash := hex.EncodeToString(sum[:])[:5]
	prefix := strings.ToLower(kind) + "-" + jobName
	const maxLen = 253 - 6
	if len(prefix) > maxLen {
		prefix = prefix[:maxLen]
	}
	return strings.TrimRight(prefix, "-.") + "-" + hash
}

// OwnerIndexKey is the value of the workload owner index for a job.
func OwnerIndexKey(gvk schema.GroupVersionKind, name string) string {
	return gvk.GroupKind().String() + "/" + name
}

// OwnerIndex indexes Workloads by their controlling job.
const OwnerIndex = "muster.dev/owner"
