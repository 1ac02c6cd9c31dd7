package core

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreImportsNoClient keeps the core pure: no API client, no
// controller-runtime, no API types. Only apimachinery's resource package,
// for formatting quantities, is allowed from Kubernetes.
func TestCoreImportsNoClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "k8s.io/api/", "github.com/musterhq/muster/apis"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) {
				t.Errorf("internal/core depends on %s", dep)
			}
		}
	}
}
