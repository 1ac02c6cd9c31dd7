package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

var apiServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// certSync does what the certificate rotator leaves to us, on every change
// of the webhook Secret or the visibility APIService:
//   - it copies the serving certificate from the Secret to the webhook
//     server's certificate directory, as the kubelet does for a mounted
//     Secret. In a pod the directory is that mount (read-only, and the copy
//     is not needed); outside a cluster (a manager run locally) this is what
//     makes the rotated certificate reach the server.
//   - it keeps the visibility APIService's caBundle the CA of the rotated
//     certificate. The APIService is not one of the rotator's webhooks on
//     purpose: the rotator reports ready only once every CA is injected, and
//     a cluster without the APIService (visibility not installed, or
//     deleted) must not keep the webhooks from starting.
//
// It watches the two objects by name through an informer cache of its own,
// so that it neither caches every Secret of the cluster nor waits for the
// leader: every replica serves webhooks and the visibility API.
type certSync struct {
	cache  cache.Cache
	writer client.Client
	secret types.NamespacedName
	dir    string
	// apiService is the APIService to inject the CA into; "" when the
	// visibility API is off.
	apiService string
}

func newCertSync(mgr manager.Manager, secret types.NamespacedName, dir string, visibility bool) (*certSync, error) {
	s := &certSync{writer: mgr.GetClient(), secret: secret, dir: dir}
	byObject := map[client.Object]cache.ByObject{
		&corev1.Secret{}: {
			Namespaces: map[string]cache.Config{secret.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", secret.Name),
		},
	}
	if visibility {
		s.apiService = VisibilityAPIServiceName
		byObject[newAPIService()] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", s.apiService)}
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), ByObject: byObject})
	if err != nil {
		return nil, fmt.Errorf("creating the certificates' cache: %w", err)
	}
	s.cache = c
	return s, nil
}

func newAPIService() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiServiceGVK)
	return u
}

// NeedLeaderElection is false: every replica needs the files, and any may
// fix the caBundle (the write is idempotent).
func (s *certSync) NeedLeaderElection() bool { return false }

// syncKey is the one item of the queue: any change means "sync both".
const syncKey = "certificates"

func (s *certSync) Start(ctx context.Context) error {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "certificates"})
	defer queue.ShutDown()
	enqueue := func() { queue.Add(syncKey) }
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { enqueue() },
		UpdateFunc: func(any, any) { enqueue() },
		DeleteFunc: func(any) { enqueue() },
	}
	watched := []client.Object{&corev1.Secret{}}
	if s.apiService != "" {
		watched = append(watched, newAPIService())
	}
	for _, obj := range watched {
		inf, err := s.cache.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watching %T for the certificates: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
	}
	errs := make(chan error, 1)
	go func() { errs <- s.cache.Start(ctx) }()
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for s.next(ctx, queue) {
	}
	return <-errs
}

// next syncs once per item, backing off while a sync fails.
func (s *certSync) next(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string]) bool {
	key, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(key)
	if err := s.sync(ctx); err != nil {
		ctrl.Log.WithName("certs").Info("Could not sync the certificates; retrying", "error", err.Error())
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}

func (s *certSync) sync(ctx context.Context) error {
	var secret corev1.Secret
	if err := s.cache.Get(ctx, s.secret, &secret); err != nil {
		// Not created yet (the rotator creates it): its creation syncs.
		return client.IgnoreNotFound(err)
	}
	if err := s.writeFiles(&secret); err != nil {
		return err
	}
	return s.injectAPIServiceCA(ctx, secret.Data["ca.crt"])
}

// writeFiles writes the serving certificate and key where they differ
// from the Secret's. A directory that cannot be written (a read-only
// mounted Secret) is left to its mount.
func (s *certSync) writeFiles(secret *corev1.Secret) error {
	log := ctrl.Log.WithName("certs")
	for _, name := range []string{"tls.crt", "tls.key"} {
		data := secret.Data[name]
		path := filepath.Join(s.dir, name)
		if len(data) == 0 {
			continue
		}
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			log.V(2).Info("Skipped writing certificates", "dir", s.dir, "error", err.Error())
			return nil
		}
		if err := writeFileAtomic(path, data); err != nil {
			log.V(2).Info("Skipped writing certificates (a mounted Secret?)", "dir", s.dir, "error", err.Error())
			return nil
		}
		log.Info("Wrote webhook certificate file", "path", path)
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// injectAPIServiceCA sets the APIService's caBundle to ca; an APIService
// that does not exist (yet) is skipped: its creation syncs again.
func (s *certSync) injectAPIServiceCA(ctx context.Context, ca []byte) error {
	if s.apiService == "" || len(ca) == 0 {
		return nil
	}
	svc := newAPIService()
	if err := s.cache.Get(ctx, types.NamespacedName{Name: s.apiService}, svc); err != nil {
		return client.IgnoreNotFound(err)
	}
	want := base64.StdEncoding.EncodeToString(ca)
	if got, _, _ := unstructured.NestedString(svc.Object, "spec", "caBundle"); got == want {
		return nil
	}
	svc = svc.DeepCopy()
	if err := unstructured.SetNestedField(svc.Object, want, "spec", "caBundle"); err != nil {
		return err
	}
	if err := s.writer.Update(ctx, svc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("injecting the CA into APIService %s: %w", s.apiService, err)
	}
	ctrl.Log.WithName("certs").Info("Injected the CA into the visibility APIService", "apiService", s.apiService)
	return nil
}
