package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	"github.com/musterhq/muster/cmd/kubectl-muster/app"
	. "github.com/musterhq/muster/test/builder"
	"github.com/musterhq/muster/test/framework"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// kubectlMuster runs the plugin with args as a user would, with the clock
// ten hours after now (ages print as "10h"), and returns what it printed.
func kubectlMuster(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = ptr.To(kubeconfig)
	cmd := app.NewCommand(streams, clocktesting.NewFakePassiveClock(time.Now().Add(10*time.Hour)), flags)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// hashes are the generated suffixes of Workload names.
var hashes = regexp.MustCompile(`\b(job-[a-z0-9-]+?)-[0-9a-f]{5}\b`)

// expectGolden compares output with testdata/<name>.golden, Workload name
// hashes masked.
func expectGolden(t *testing.T, name, output string) {
	t.Helper()
	output = hashes.ReplaceAllString(output, "$1-XXXXX")
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(output), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != output {
		t.Errorf("%s differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, path, output, want)
	}
}

// setUpQueues makes team-a's LocalQueue main on ClusterQueue gpus (4 a100
// and 2 h100 GPUs, cohort pool), runs one Job of 4 GPUs, and leaves two of
// 3 GPUs waiting: the first short 3 on a100, and never fitting h100.
func setUpQueues(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	env.CreateAll(t, ns,
		MakeResourceFlavor("a100").NodeLabel("gpu", "a100").QuotaOnly().Obj(),
		MakeResourceFlavor("h100").NodeLabel("gpu", "h100").QuotaOnly().Obj(),
		MakeClusterQueue("gpus").Cohort("pool").ResourceGroup(
			MakeFlavorQuotas("a100").Resource(framework.GPU, "4").Obj(),
			MakeFlavorQuotas("h100").Resource(framework.GPU, "2").Obj()).Obj(),
		MakeLocalQueue("main", "team-a").ClusterQueue("gpus").Obj())
	running := MakeJob("running", "team-a").Queue("main").Request(framework.GPU, "4").Obj()
	env.CreateAll(t, running)
	env.ExpectJobRunning(t, running, nil)
	for _, name := range []string{"waits", "behind"} {
		j := MakeJob(name, "team-a").Queue("main").Request(framework.GPU, "3").Obj()
		env.CreateAll(t, j)
		env.ExpectJobPending(t, j, "insufficient quota")
	}
	// The queue's status counts lag the workloads by up to a second.
	g.Eventually(func(g Gomega) {
		var cq musterv1beta1.ClusterQueue
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: "gpus"}, &cq)).To(Succeed())
		g.Expect(cq.Status.PendingWorkloads).To(BeEquivalentTo(2))
		g.Expect(cq.Status.AdmittedWorkloads).To(BeEquivalentTo(1))
		var lq musterv1beta1.LocalQueue
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "main"}, &lq)).To(Succeed())
		g.Expect(lq.Status.PendingWorkloads).To(BeEquivalentTo(2))
	}, framework.Timeout, framework.Interval).Should(Succeed())
}

// TestCommands runs each read-only command on the same queues.
func TestCommands(t *testing.T) {
	setUpQueues(t)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"list-workloads", []string{"list", "workloads", "-n", "team-a"}},
		{"list-workloads-all-wide", []string{"list", "workloads", "-A", "-o", "wide"}},
		{"list-clusterqueues", []string{"list", "clusterqueues"}},
		{"list-localqueues", []string{"list", "localqueues", "-A"}},
		{"list-localqueues-jsonpath", []string{"list", "localqueues", "-n", "team-a", "-o", "jsonpath={.items[*].spec.clusterQueue}"}},
		{"why-waiting", []string{"why", "job/waits", "-n", "team-a"}},
		{"why-behind", []string{"why", "job/behind", "-n", "team-a"}},
		{"why-running", []string{"why", "job/running", "-n", "team-a"}},
		{"top", []string{"top"}},
		{"create-localqueue-dry-run", []string{"create", "localqueue", "extra", "-n", "team-a", "--clusterqueue", "gpus", "--dry-run=client", "-o", "yaml"}},
		{"create-clusterqueue-dry-run", []string{"create", "clusterqueue", "more", "--cohort", "pool",
			"--nominal-quota", "a100:nvidia.com/gpu=8;cpu=64,h100:nvidia.com/gpu=8;cpu=64,big-memory:memory=2Ti",
			"--borrowing-limit", "a100:nvidia.com/gpu=4", "--dry-run=client", "-o", "yaml"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, err := kubectlMuster(t, tc.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if errOut != "" {
				t.Errorf("unexpected stderr: %s", errOut)
			}
			expectGolden(t, tc.golden, out)
		})
	}
}

// TestStopAndResume: stop holds the queue (the next list says so), resume
// lets it admit again.
func TestStopAndResume(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "stop", nil)
	env.CreateAll(t, MakeLocalQueue("held", ns).ClusterQueue("nowhere").Obj())
	out, _, err := kubectlMuster(t, "stop", "localqueue", "held", "-n", ns, "--keep-already-running")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal("localqueue/held stopPolicy set to Hold\n"))
	var lq musterv1beta1.LocalQueue
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "held"}, &lq)).To(Succeed())
	g.Expect(*lq.Spec.StopPolicy).To(Equal(musterv1beta1.Hold))
	_, _, err = kubectlMuster(t, "resume", "lq", "held", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "held"}, &lq)).To(Succeed())
	g.Expect(*lq.Spec.StopPolicy).To(Equal(musterv1beta1.None))
}

// TestCreateForReal: create sends what --dry-run=client prints, and the API
// server's validation speaks for bad quota.
func TestCreateForReal(t *testing.T) {
	g := NewWithT(t)
	out, errOut, err := kubectlMuster(t, "create", "clusterqueue", "created-cq", "--nominal-quota", "f:cpu=4")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(Equal("clusterqueue/created-cq created\n"))
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "created-cq"}})
	})
	_, _, err = kubectlMuster(t, "create", "clusterqueue", "bad", "--nominal-quota", "f:cpu=four")
	g.Expect(err).To(MatchError(ContainSubstring("--nominal-quota: cpu=four")))
	_, _, err = kubectlMuster(t, "create", "clusterqueue", "bad", "--queuing-strategy", "Random")
	g.Expect(err).To(MatchError(ContainSubstring("StrictFIFO or BestEffortFIFO")))
	_, _, err = kubectlMuster(t, "create", "clusterqueue", "bad", "--nominal-quota", "a:cpu=1;memory=1Gi,b:cpu=2")
	g.Expect(err).To(MatchError(ContainSubstring("cpu is in flavors with different resources")))
}

// TestUsageErrors: mistakes on the command line are said before any
// request, with the way to help.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"list", "pods"},
		{"why", "deployment/x"},
		{"list", "workloads", "-o", "xml"},
		{"stop", "cohort", "x"},
		{"create", "localqueue", "x"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, _, err := kubectlMuster(t, args...)
			NewWithT(t).Expect(err).To(HaveOccurred())
		})
	}
}

// TestImportKueue: Kueue's objects (v1beta2, the version Kueue v0.19
// stores) become Muster's of the same names; the fields without an
// equivalent are reported; the dry run applies nothing, the real run
// everything.
func TestImportKueue(t *testing.T) {
	g := NewWithT(t)
	for _, doc := range strings.Split(kueueObjects, "---\n") {
		obj := &unstructured.Unstructured{}
		g.Expect(obj.UnmarshalJSON(yamlToJSON(t, doc))).To(Succeed())
		env.CreateAll(t, obj)
	}
	out, errOut, err := kubectlMuster(t, "import-kueue", "--dry-run")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	expectGolden(t, "import-kueue-dry-run", out)
	var cq musterv1beta1.ClusterQueue
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: "kueue-cq"}, &cq)).NotTo(Succeed(), "a dry run applies nothing")

	out, errOut, err = kubectlMuster(t, "import-kueue")
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	expectGolden(t, "import-kueue", out+errOut)
	t.Cleanup(func() {
		for _, o := range []client.Object{
			&musterv1beta1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "kueue-lq", Namespace: "kueue-team"}},
			&musterv1beta1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "kueue-cq"}},
			&musterv1beta1.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "kueue-root"}},
			&musterv1beta1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "kueue-gpu"}},
			&musterv1beta1.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "kueue-high"}},
		} {
			_ = env.Client.Delete(context.Background(), o)
		}
	})
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: "kueue-cq"}, &cq)).To(Succeed())
	g.Expect(string(cq.Spec.Cohort)).To(Equal("kueue-root"))
	g.Expect(cq.Spec.FlavorFungibility.WhenCanBorrow).To(Equal(musterv1beta1.Borrow))
	var wpc musterv1beta1.WorkloadPriorityClass
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: "kueue-high"}, &wpc)).To(Succeed())
	g.Expect(wpc.Value).To(BeEquivalentTo(1000))
}

func yamlToJSON(t *testing.T, doc string) []byte {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(j)
}

// kueueObjects are a small Kueue setup, as v1beta2.
const kueueObjects = `apiVersion: v1
kind: Namespace
metadata:
  name: kueue-team
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: kueue-gpu
  labels:
    team: ml
spec:
  nodeLabels:
    gpu: a100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: kueue-high
value: 1000
description: urgent training
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata:
  name: kueue-root
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata:
  name: kueue-prov
spec:
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
  managedResources: [nvidia.com/gpu]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata:
  name: provisioning
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters:
    apiGroup: kueue.x-k8s.io
    kind: ProvisioningRequestConfig
    name: kueue-prov
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: kueue-cq
spec:
  cohortName: kueue-root
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  flavorFungibility:
    whenCanBorrow: MayStopSearch
    whenCanPreempt: TryNextFlavor
  admissionChecksStrategy:
    admissionChecks:
    - name: provisioning
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: kueue-gpu
      resources:
      - name: nvidia.com/gpu
        nominalQuota: "8"
        borrowingLimit: "4"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: kueue-lq
  namespace: kueue-team
spec:
  clusterQueue: kueue-cq
`

// TestWhyShowsTheSchedulersVictims: in a queue that preempts lower
// priority after an hour's minimum runtime, a high-priority job that fits
// only by preempting is told which running job the scheduler's own search
// would evict, and when — not a list rebuilt from the queue's status.
func TestWhyShowsTheSchedulersVictims(t *testing.T) {
	g := NewWithT(t)
	ns := env.NewNamespace(t, "victims", nil)
	env.CreateAll(t,
		MakeWorkloadPriorityClass("why-high", 100), MakeWorkloadPriorityClass("why-low", 1),
		MakeResourceFlavor("why-a100").QuotaOnly().Obj(),
		MakeClusterQueue("protective").ResourceGroup(MakeFlavorQuotas("why-a100").Resource(framework.GPU, "4").Obj()).
			Preemption(musterv1beta1.ClusterQueuePreemption{WithinClusterQueue: musterv1beta1.PreemptionPolicyLowerPriority, MinRuntimeSeconds: ptr.To[int32](3600)}).Obj(),
		MakeLocalQueue("main", ns).ClusterQueue("protective").Obj())
	low := MakeJob("low", ns).Queue("main").Label(musterv1beta1.WorkloadPriorityClassLabel, "why-low").Request(framework.GPU, "3").Obj()
	other := MakeJob("other", ns).Queue("main").Label(musterv1beta1.WorkloadPriorityClassLabel, "why-high").Request(framework.GPU, "1").Obj()
	env.CreateAll(t, low, other)
	env.ExpectJobRunning(t, low, nil)
	env.ExpectJobRunning(t, other, nil)
	urgent := MakeJob("urgent", ns).Queue("main").Label(musterv1beta1.WorkloadPriorityClassLabel, "why-high").Request(framework.GPU, "2").Obj()
	env.CreateAll(t, urgent)
	env.ExpectJobPending(t, urgent, "minimum runtime")

	out, errOut, err := kubectlMuster(t, "why", "job/urgent", "-n", ns)
	g.Expect(err).NotTo(HaveOccurred(), errOut)
	g.Expect(out).To(ContainSubstring("The scheduler's search, run now: it fits only by preempting."))
	g.Expect(out).To(MatchRegexp(`Preemption: would evict 1 workload\(s\) once they have run their minimum runtime, the first in 59m\d+s:\n  ` +
		ns + `/job-low-[0-9a-f]{5} \(ClusterQueue protective, priority 1, InClusterQueue\)\n`))
	g.Expect(out).NotTo(ContainSubstring("job-other"), "the higher-priority job is no victim")
}
