// Package dashboard tests the web dashboard as a person sees it: headless
// Chromium (Debian's, driven by chromedp) loads the page a manager serves
// on a real API server, and the test reads what is on the screen while
// Jobs are admitted and wait.
package dashboard

import (
	"testing"

	"github.com/musterhq/muster/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) { framework.Main(m, framework.Options{Webhooks: true}, &env, false) }
