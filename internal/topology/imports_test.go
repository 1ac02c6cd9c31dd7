package topology

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTopologyImportsPure keeps the placement core pure and self-contained:
// no API client, no controller-runtime, no API types, nothing else of the
// module. At most apimachinery's resource package may come from Kubernetes.
func TestTopologyImportsPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/musterhq/muster/internal/topology"
	forbidden := []string{"k8s.io/client-go", "sigs.k8s.io/", "k8s.io/api/", "github.com/musterhq/muster/"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) && dep != self {
				t.Errorf("internal/topology depends on %s", dep)
			}
		}
	}
}
