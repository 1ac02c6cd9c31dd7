package v1beta1

// GangSchedulerProvider names the scheduler that binds an admitted job's
// pods all together or not at all (docs/gang-scheduling.md).
// +kubebuilder:validation:Enum=None;KubeScheduler;Volcano;Coscheduling;KAI
type GangSchedulerProvider string

const (
	// GangNone hands admitted jobs to their pods' scheduler as they are:
	// quota is admitted whole, binding is pod by pod.
	GangNone GangSchedulerProvider = "None"
	// GangKubeScheduler is Kubernetes' own gang scheduling: a
	// scheduling.k8s.io/v1beta1 Workload and one PodGroup for the whole job
	// (all its admitted pods, every pod set), bound by kube-scheduler
	// (GenericWorkload feature gate).
	GangKubeScheduler GangSchedulerProvider = "KubeScheduler"
	// GangVolcano is Volcano's scheduler and its scheduling.volcano.sh
	// PodGroup.
	GangVolcano GangSchedulerProvider = "Volcano"
	// GangCoscheduling is the coscheduling plugin of scheduler-plugins and
	// its scheduling.x-k8s.io PodGroup.
	GangCoscheduling GangSchedulerProvider = "Coscheduling"
	// GangKAI is NVIDIA's KAI Scheduler, whose podgrouper makes the pod
	// group from the job.
	GangKAI GangSchedulerProvider = "KAI"
)

// GangScheduling says which gang scheduler binds the pods of the jobs a
// ClusterQueue admits.
type GangScheduling struct {
	// provider is the gang scheduler. Unset, the manager's configured
	// default (gangScheduling.provider) applies.
	// +optional
	Provider GangSchedulerProvider `json:"provider,omitempty"`

	// queue is the gang scheduler's own queue the pod groups go to: a
	// Volcano Queue or a KAI queue. Unset, a job's own label for it
	// (volcano.sh/queue-name, kai.scheduler/queue) or else the manager's
	// configured default is used.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Queue string `json:"queue,omitempty"`
}

// Labels and annotations Muster puts on the pod templates of a job it
// hands to a gang scheduler, read by its pod webhook when the pods are
// created (a Job's schedulerName and schedulingGroup cannot change once it
// exists, so they are set on the pods).
const (
	// GangProviderLabel marks the pods of an admitted job that a gang
	// scheduler binds; the pod webhook sees only pods with it.
	GangProviderLabel = "muster.dev/gang-scheduler"
	// SchedulerNameAnnotation is the schedulerName the pod webhook gives
	// the pods.
	SchedulerNameAnnotation = "muster.dev/scheduler-name"
	// SchedulingGroupAnnotation is the scheduling.k8s.io PodGroup the pod
	// webhook puts in the pods' spec.schedulingGroup.
	SchedulingGroupAnnotation = "muster.dev/scheduling-group"
	// GangAddedAnnotation lists the labels and annotations Muster added to
	// a pod template for the gang scheduler, so that stopping the job
	// removes exactly those.
	GangAddedAnnotation = "muster.dev/gang-added"
	// JobMinParallelismAnnotation on a batch/v1 Job allows it to be
	// admitted with fewer pods than its parallelism, down to this many
	// (Kueue's kueue.x-k8s.io/job-min-parallelism is read too).
	JobMinParallelismAnnotation = "muster.dev/job-min-parallelism"
)

// Reasons of the gang hand-off.
const (
	// ReasonGangSchedulerNotFound: the API of the ClusterQueue's gang
	// scheduler is not served; the queue admits nothing until it is.
	ReasonGangSchedulerNotFound = "GangSchedulerNotFound"
	// ReasonGangNotApplied: the job's pods could not be pointed at its pod
	// group (an event on the job).
	ReasonGangNotApplied = "GangNotApplied"
)
