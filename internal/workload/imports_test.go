package workload

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoClient keeps the state machine pure: it may use the API
// types and apimachinery, never an API client or controller-runtime, so its
// transitions stay plain functions of a Workload and the time.
func TestImportsNoClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"k8s.io/apimachinery/", "github.com/musterhq/muster/apis/muster/v1beta1"}
	for _, imp := range strings.Fields(string(out)) {
		std := !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".")
		ok := std
		for _, a := range allowed {
			ok = ok || strings.HasPrefix(imp, a)
		}
		if !ok {
			t.Errorf("internal/workload imports %s", imp)
		}
	}
	deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(deps)) {
		if strings.HasPrefix(dep, "k8s.io/client-go") || strings.HasPrefix(dep, "sigs.k8s.io/controller-runtime/pkg/client") {
			t.Errorf("internal/workload depends on %s", dep)
		}
	}
}
