// Command jobcrds copies the CRD of every registered job kind that has one
// (controllers/jobs) from the Go module cache into DIR/<kind, lower case>/,
// where the integration tests install them from (test/framework.JobCRDDir).
// The modules are those go.mod pins; nothing is downloaded but modules.
//
//	jobcrds bin/crds
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/musterhq/muster/controllers/jobframework"
	"github.com/musterhq/muster/controllers/jobs"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: jobcrds DIR")
		os.Exit(2)
	}
	for _, i := range jobs.Registry().Integrations() {
		if i.CRD == nil {
			continue
		}
		if err := copyCRD(os.Args[1], i); err != nil {
			fmt.Fprintf(os.Stderr, "jobcrds: %s: %v\n", i.Name, err)
			os.Exit(1)
		}
	}
}

// crdDir is where a kind's CRD goes under dir: bin/crds/raycluster.
func crdDir(dir string, i jobframework.Integration) string {
	return filepath.Join(dir, strings.ToLower(i.GVK.Kind))
}

func copyCRD(dir string, i jobframework.Integration) error {
	module := i.CRD.Module
	if i.CRD.Version != "" {
		module += "@" + i.CRD.Version
	}
	if out, err := exec.Command("go", "mod", "download", module).CombinedOutput(); err != nil {
		return fmt.Errorf("go mod download %s: %v: %s", module, err, out)
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return fmt.Errorf("go list -m %s: %w", module, err)
	}
	target := crdDir(dir, i)
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	for _, path := range append([]string{i.CRD.Path}, i.CRD.Related...) {
		data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), path))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(target, filepath.Base(path)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
