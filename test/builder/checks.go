package builder

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// MakeAdmissionCheck starts an AdmissionCheck answered by controller.
func MakeAdmissionCheck(name, controller string) *musterv1beta1.AdmissionCheck {
	return &musterv1beta1.AdmissionCheck{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       musterv1beta1.AdmissionCheckSpec{ControllerName: controller},
	}
}

// MakeProvisioningCheck is an AdmissionCheck of Muster's ProvisioningRequest
// controller with its ProvisioningRequestConfig: class, managed resources,
// and a retry strategy of limit retries from a base backoff of
// baseSeconds.
func MakeProvisioningCheck(name, class string, limit, baseSeconds int32, managed ...corev1.ResourceName) (*musterv1beta1.AdmissionCheck, *musterv1beta1.ProvisioningRequestConfig) {
	ac := MakeAdmissionCheck(name, musterv1beta1.ProvisioningRequestControllerName)
	ac.Spec.Parameters = &musterv1beta1.AdmissionCheckParametersReference{
		APIGroup: musterv1beta1.GroupVersion.Group, Kind: "ProvisioningRequestConfig", Name: name,
	}
	cfg := &musterv1beta1.ProvisioningRequestConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: musterv1beta1.ProvisioningRequestConfigSpec{
			ProvisioningClassName: class,
			ManagedResources:      managed,
			RetryStrategy: &musterv1beta1.ProvisioningRequestRetryStrategy{
				BackoffLimitCount: ptr.To(limit), BackoffBaseSeconds: ptr.To(baseSeconds), BackoffMaxSeconds: ptr.To(baseSeconds * 8),
			},
		},
	}
	return ac, cfg
}

// MakeMultiClusterCheck is an AdmissionCheck of Muster's multi-cluster
// dispatcher with its MultiClusterConfig listing clusters.
func MakeMultiClusterCheck(name string, clusters ...string) (*musterv1beta1.AdmissionCheck, *musterv1beta1.MultiClusterConfig) {
	ac := MakeAdmissionCheck(name, musterv1beta1.MultiClusterControllerName)
	ac.Spec.Parameters = &musterv1beta1.AdmissionCheckParametersReference{
		APIGroup: musterv1beta1.GroupVersion.Group, Kind: "MultiClusterConfig", Name: name,
	}
	cfg := &musterv1beta1.MultiClusterConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       musterv1beta1.MultiClusterConfigSpec{Clusters: clusters},
	}
	return ac, cfg
}

// MakeMultiCluster is a worker cluster whose kubeconfig is the Secret
// secret in Muster's namespace.
func MakeMultiCluster(name, secret string) *musterv1beta1.MultiCluster {
	return &musterv1beta1.MultiCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: musterv1beta1.MultiClusterSpec{KubeConfig: musterv1beta1.KubeConfig{
			Location: secret, LocationType: musterv1beta1.SecretLocationType,
		}},
	}
}

// MakeKubeConfigSecret is the Secret a MultiCluster reads its kubeconfig
// from.
func MakeKubeConfigSecret(name, namespace string, kubeconfig []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Data:       map[string][]byte{musterv1beta1.MultiClusterKubeConfigKey: kubeconfig},
	}
}
