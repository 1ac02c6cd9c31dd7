package dashboard

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
)

// Who may see what: a bearer token the API server authenticates
// (TokenReview) and authorizes for GET on /dashboard/* sees the dashboard;
// of the workloads it lists only those of the namespaces where the token
// may list Workloads (a SubjectAccessReview per namespace, cached by the
// delegating authorizer: 5 minutes when allowed, 30 s when not). Queue
// names, quota bars and counts are cluster-scoped and shown to every
// viewer.

// mayList says whether the request's user may list Workloads in a
// namespace.
type mayList func(namespace string) bool

type mayListKey struct{}

// mayListFrom is the request's namespace filter; nil (no authentication:
// a developer's plain-HTTP dashboard) shows every namespace.
func mayListFrom(ctx context.Context) mayList {
	may, _ := ctx.Value(mayListKey{}).(mayList)
	return may
}

var retryBackoff = &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// authenticating wraps the handler: it authenticates the bearer token,
// authorizes the request's path, and hands the handler the namespaces the
// user may list Workloads in.
func authenticating(cfg *rest.Config, client *http.Client, log logr.Logger, next http.Handler) (http.Handler, error) {
	authn, err := authenticationv1.NewForConfigAndClient(cfg, client)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationv1.NewForConfigAndClient(cfg, client)
	if err != nil {
		return nil, err
	}
	authenticator, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous: &apiserver.AnonymousAuthConfig{Enabled: false}, CacheTTL: time.Minute,
		TokenAccessReviewClient: authn, TokenAccessReviewTimeout: 10 * time.Second, WebhookRetryBackoff: retryBackoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("dashboard authenticator: %w", err)
	}
	az, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authz, AllowCacheTTL: 5 * time.Minute, DenyCacheTTL: 30 * time.Second,
		WebhookRetryBackoff: retryBackoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("dashboard authorizer: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok, err := authenticator.AuthenticateRequest(r)
		switch {
		case err != nil:
			log.Error(err, "Authentication failed")
			http.Error(w, "Authentication failed", http.StatusInternalServerError)
			return
		case !ok:
			http.Error(w, "Unauthorized: log in at "+Prefix+"login", http.StatusUnauthorized)
			return
		}
		u := res.User
		decision, _, err := az.Authorize(r.Context(), authorizer.AttributesRecord{User: u, Verb: strings.ToLower(r.Method), Path: r.URL.Path})
		if err != nil || decision != authorizer.DecisionAllow {
			http.Error(w, "Authorization denied for user "+u.GetName(), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mayListKey{}, listFilter(r.Context(), az, u))))
	}), nil
}

// listFilter asks, once per namespace and request, whether u may list
// Workloads there; cluster-wide permission answers for all.
func listFilter(ctx context.Context, az authorizer.Authorizer, u user.Info) mayList {
	ask := func(ns string) bool {
		d, _, err := az.Authorize(ctx, authorizer.AttributesRecord{User: u, Verb: "list", Namespace: ns,
			APIGroup: musterv1beta1.GroupVersion.Group, APIVersion: musterv1beta1.GroupVersion.Version,
			Resource: "workloads", ResourceRequest: true})
		return err == nil && d == authorizer.DecisionAllow
	}
	if ask("") {
		return nil
	}
	seen := map[string]bool{}
	return func(ns string) bool {
		may, ok := seen[ns]
		if !ok {
			may = ask(ns)
			seen[ns] = may
		}
		return may
	}
}

// loginPage asks for the token: a POST form, so that the token never lands
// in a URL (browser history, proxy and access logs).
var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Muster — log in</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto">
<h1>Muster dashboard</h1>
<p>Paste a bearer token allowed <code>GET</code> on <code>/dashboard/*</code>
(bind the ClusterRole <code>muster-dashboard-viewer</code>), e.g.
<code>kubectl create token &lt;service account&gt;</code>. You see the
workloads of the namespaces it may list Workloads in.</p>
<form method="post" action="{{.}}login">
<input type="password" name="token" id="token" autocomplete="off" style="width: 100%" required>
<p><button type="submit" id="login">Log in</button></p>
</form></body></html>`))

// withLogin serves /dashboard/login: GET shows the form, POST takes the
// token into an HttpOnly cookie and sends the browser to the dashboard.
// The token is checked on the next request, as any. A token in the URL
// is refused.
func withLogin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != Prefix+"login" {
			next.ServeHTTP(w, r)
			return
		}
		switch {
		case r.URL.Query().Has("token"):
			http.Error(w, "a token in the URL is refused (it would land in browser history and logs): log in with the form at "+Prefix+"login", http.StatusBadRequest)
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = loginPage.Execute(w, Prefix)
		case r.Method == http.MethodPost:
			token := strings.TrimSpace(r.PostFormValue("token"))
			if token == "" {
				http.Error(w, "login needs a token", http.StatusBadRequest)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: Prefix, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, Prefix, http.StatusSeeOther)
		default:
			http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
		}
	})
}
