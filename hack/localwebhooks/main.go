// Command localwebhooks points Muster's webhook configurations at a manager
// running outside the cluster: it reads the output of
// `kubectl kustomize config/webhook` on stdin and writes it with every
// webhook's service reference replaced by https://HOST:PORT/<path> and the
// given CA bundle, and every configuration's name prefixed with -prefix
// (an operator's configurations, named as in its own kustomization, may not
// clash with another's). Other objects are dropped. The local cluster
// (hack/cluster.sh) uses it for Muster's webhooks and the operators'.
//
//	localwebhooks -url https://127.0.0.1:9443 -ca ca.crt [-prefix jobset-] < in.yaml > out.yaml
package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func main() {
	base := flag.String("url", "https://127.0.0.1:9443", "base URL of the webhook server")
	caFile := flag.String("ca", "", "PEM file of the CA that signed the webhook server's certificate")
	prefix := flag.String("prefix", "", "prefix of every webhook configuration's name")
	flag.Parse()
	if err := run(*base, *caFile, *prefix, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "localwebhooks:", err)
		os.Exit(1)
	}
}

func run(base, caFile, prefix string, in io.Reader, out io.Writer) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		kind, _ := doc["kind"].(string)
		if kind != "MutatingWebhookConfiguration" && kind != "ValidatingWebhookConfiguration" {
			continue
		}
		if md, ok := doc["metadata"].(map[string]any); ok && prefix != "" {
			md["name"] = prefix + fmt.Sprint(md["name"])
		}
		hooks, _ := doc["webhooks"].([]any)
		for _, h := range hooks {
			hook := h.(map[string]any)
			cc := hook["clientConfig"].(map[string]any)
			svc, _ := cc["service"].(map[string]any)
			path, _ := svc["path"].(string)
			hook["clientConfig"] = map[string]any{"url": base + path, "caBundle": base64.StdEncoding.EncodeToString(ca)}
		}
		b, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "---\n%s", b); err != nil {
			return err
		}
	}
}
