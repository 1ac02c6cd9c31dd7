// Package volcanoapis only imports the Volcano API package that
// `make gang-crds` generates CRDs from, so that go.mod keeps it pinned.
package volcanoapis

import _ "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
