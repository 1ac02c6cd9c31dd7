// Package leaderworkerset admits a LeaderWorkerSet group by group: each
// group (its leader and size-1 workers) is one pod group, one Workload
// admitted whole, so serving replicas scale one group of quota at a time.
// A LeaderWorkerSet cannot be suspended and needs no Workload of its own:
// its webhook puts its queue label on both pod templates, the pod webhook
// gates the Pods the LeaderWorkerSet controller makes, and the pod group
// reconciler (controllers/jobs/pod) names each group after the set and its
// group index, of the set's size. A group scaled away takes its Workload
// with its last Pod; a group replaced by a rolling update gets a Workload
// of its new shape once its old Pods are gone.
package leaderworkerset

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/controllers/jobframework"
)

// +kubebuilder:webhook:path=/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset,mutating=true,failurePolicy=fail,sideEffects=None,groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=create;update,versions=v1,name=mleaderworkerset.muster.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset,mutating=false,failurePolicy=fail,sideEffects=None,groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=create;update,versions=v1,name=vleaderworkerset.muster.dev,admissionReviewVersions=v1

// Framework is the kind's name in integrations.frameworks, Kueue's.
const Framework = "leaderworkerset.x-k8s.io/leaderworkerset"

// PodFramework is the framework a LeaderWorkerSet's groups are admitted
// by: it must be enabled with this one.
const PodFramework = "pod"

// kind describes LeaderWorkerSet to the framework's no-op webhook; the
// kind has no GenericJob, since nothing suspends it.
var kind = jobframework.Kind[*lwsv1.LeaderWorkerSet]{
	Framework:   Framework,
	GVK:         lwsv1.GroupVersion.WithKind("LeaderWorkerSet"),
	AddToScheme: lwsv1.AddToScheme,
	CRD:         &jobframework.CRDSource{Module: "sigs.k8s.io/lws", Path: "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"},
	New:         func() *lwsv1.LeaderWorkerSet { return &lwsv1.LeaderWorkerSet{} },
}

// Integration is LeaderWorkerSet for the registry: its webhooks, and no
// reconciler of its own.
func Integration() jobframework.Integration {
	return jobframework.Integration{
		Name:        kind.Framework,
		GVK:         kind.GVK,
		AddToScheme: kind.AddToScheme,
		CRD:         kind.CRD,
		SetupWebhook: func(mgr ctrl.Manager, opts jobframework.Options) error {
			w := &Webhook{opts: opts, reader: mgr.GetClient()}
			return ctrl.NewWebhookManagedBy(mgr, kind.New()).WithDefaulter(w).WithValidator(w).Complete()
		},
		SetupNoopWebhook: func(mgr ctrl.Manager) error { return jobframework.SetupNoopWebhook(mgr, kind) },
		// The pod group reconciler admits the groups.
		SetupReconciler: func(ctrl.Manager, jobframework.Options) error { return nil },
		Requires:        []string{PodFramework},
		RequiresWhy:     "admits each group's Pods as a pod group",
	}
}

// copiedLabels go from the LeaderWorkerSet to its Pods: the queue and the
// priority class, which the pod webhook and the pod group reconciler read
// from each Pod.
var copiedLabels = []string{
	musterv1beta1.QueueNameLabel, musterv1beta1.KueueQueueNameLabel,
	musterv1beta1.WorkloadPriorityClassLabel, musterv1beta1.KueuePrefix + "priority-class",
}

// Webhook puts a queued LeaderWorkerSet's queue on its pod templates and
// refuses the shapes whose groups cannot be admitted whole.
type Webhook struct {
	opts   jobframework.Options
	reader client.Reader
}

// NewWebhook returns the webhook reading namespaces through reader.
func NewWebhook(opts jobframework.Options, reader client.Reader) *Webhook {
	return &Webhook{opts: opts, reader: reader}
}

func (w *Webhook) gated(ctx context.Context, lws *lwsv1.LeaderWorkerSet) (bool, error) {
	if jobframework.QueueName(lws, w.opts) == "" {
		return false, nil
	}
	return w.opts.Manages(ctx, w.reader, lws.Namespace)
}

// Default labels both pod templates with the set's queue and priority
// class, on every write, so an edited template keeps them.
func (w *Webhook) Default(ctx context.Context, lws *lwsv1.LeaderWorkerSet) error {
	if gated, err := w.gated(ctx, lws); !gated || err != nil {
		return err
	}
	t := &lws.Spec.LeaderWorkerTemplate
	copyLabels(lws.Labels, &t.WorkerTemplate.Labels)
	if t.LeaderTemplate != nil {
		copyLabels(lws.Labels, &t.LeaderTemplate.Labels)
	}
	log.FromContext(ctx).V(2).Info("Queued the pod templates of a LeaderWorkerSet", "leaderWorkerSet", klog.KObj(lws))
	return nil
}

func copyLabels(from map[string]string, to *map[string]string) {
	for _, k := range copiedLabels {
		v, ok := from[k]
		if !ok {
			continue
		}
		if *to == nil {
			*to = map[string]string{}
		}
		(*to)[k] = v
	}
}

func (w *Webhook) ValidateCreate(ctx context.Context, lws *lwsv1.LeaderWorkerSet) (admission.Warnings, error) {
	return nil, w.validate(ctx, lws)
}

func (w *Webhook) ValidateUpdate(ctx context.Context, _, lws *lwsv1.LeaderWorkerSet) (admission.Warnings, error) {
	return nil, w.validate(ctx, lws)
}

func (w *Webhook) ValidateDelete(context.Context, *lwsv1.LeaderWorkerSet) (admission.Warnings, error) {
	return nil, nil
}

func (w *Webhook) validate(ctx context.Context, lws *lwsv1.LeaderWorkerSet) error {
	if gated, err := w.gated(ctx, lws); !gated || err != nil {
		return err
	}
	if errs := ValidateQueued(lws); len(errs) > 0 {
		return apierrors.NewInvalid(kind.GVK.GroupKind(), lws.Name, errs)
	}
	return nil
}

// ValidateQueued refuses the shapes in which a group's workers are made
// only after its leader runs: the group could never be whole at the gate.
func ValidateQueued(lws *lwsv1.LeaderWorkerSet) field.ErrorList {
	var errs field.ErrorList
	if lws.Spec.StartupPolicy == lwsv1.LeaderReadyStartupPolicy {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "startupPolicy"),
			"LeaderReady creates a group's workers only once its leader runs, so Muster could never admit the group whole; use LeaderCreated"))
	}
	if _, ok := lws.Annotations[lwsv1.ExclusiveKeyAnnotationKey]; ok {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(lwsv1.ExclusiveKeyAnnotationKey),
			"exclusive placement creates a group's workers only once its leader is scheduled, so Muster could never admit the group whole; "+
				"to keep a group in one domain, annotate both pod templates with kueue.x-k8s.io/podset-required-topology"))
	}
	return errs
}
