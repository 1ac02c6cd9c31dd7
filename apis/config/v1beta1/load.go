package v1beta1

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Load reads a configuration file, or takes all defaults when path is empty,
// and returns it defaulted and validated, all but integrations.frameworks:
// the manager completes that from its job registry.
func Load(path string) (*Configuration, error) {
	cfg := &Configuration{}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading config file: %w", err)
		}
		scheme := runtime.NewScheme()
		if err := AddToScheme(scheme); err != nil {
			return nil, err
		}
		codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
		if err := runtime.DecodeInto(codecs.UniversalDecoder(GroupVersion), data, cfg); err != nil {
			return nil, fmt.Errorf("decoding config file %s: %w", path, err)
		}
	}
	SetDefaults(cfg)
	if errs := Validate(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("invalid config: %w", errs.ToAggregate())
	}
	return cfg, nil
}
