package framework

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// UserRoles are the ClusterRoles of config/rbac/user_roles.yaml, created
// (under names unique to the test) for the test's duration.
type UserRoles struct{ BatchAdmin, BatchUser string }

// UserRoles creates Muster's user ClusterRoles as config/rbac defines them.
func (e *Env) UserRoles(t testing.TB) UserRoles {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "rbac", "user_roles.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	suffix := "-" + NewNamespace(t, e.Client, "roles", nil)
	out := UserRoles{}
	for {
		var role rbacv1.ClusterRole
		if err := dec.Decode(&role); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch role.Name {
		case "batch-admin":
			out.BatchAdmin = role.Name + suffix
		case "batch-user":
			out.BatchUser = role.Name + suffix
		default:
			continue
		}
		role.Name += suffix
		e.CreateAll(t, &role)
	}
	if out.BatchAdmin == "" || out.BatchUser == "" {
		t.Fatalf("user_roles.yaml lacks batch-admin or batch-user: %+v", out)
	}
	return out
}

// RoleBindingFor binds a ClusterRole to a user in a namespace.
func RoleBindingFor(clusterRole, user, namespace string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterRole + "-" + user, Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
}

// ClusterRoleBindingFor binds a ClusterRole to a user cluster-wide.
func ClusterRoleBindingFor(clusterRole, user string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterRole + "-" + user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
}
