package api

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	musterv1beta1 "github.com/musterhq/muster/apis/muster/v1beta1"
	. "github.com/musterhq/muster/test/builder"
)

func TestTopologyValidation(t *testing.T) {
	cases := map[string]struct {
		levels  []string
		wantErr string
	}{
		"block, rack, host":      {levels: []string{"muster.dev/block", "topology.kubernetes.io/rack", "kubernetes.io/hostname"}},
		"one level":              {levels: []string{"topology.kubernetes.io/rack"}},
		"none":                   {levels: nil, wantErr: "spec.levels"},
		"hostname not last":      {levels: []string{"kubernetes.io/hostname", "topology.kubernetes.io/rack"}, wantErr: "may only be the last level"},
		"twice the same":         {levels: []string{"a/rack", "a/rack"}, wantErr: "each level must name a different node label"},
		"not a label key":        {levels: []string{"not a label"}, wantErr: "spec.levels[0].nodeLabel"},
		"nine levels, above max": {levels: []string{"l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9"}, wantErr: "must have at most 8 items"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			topo := MakeTopology("t-validation", tc.levels...)
			err := env.Client.Create(context.Background(), topo)
			if tc.wantErr == "" {
				NewWithT(t).Expect(err).To(Succeed())
				_ = env.Client.Delete(context.Background(), topo)
				return
			}
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}

func TestTopologyLevelsAreImmutable(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	topo := MakeTopology("t-immutable", "topology.kubernetes.io/rack", "kubernetes.io/hostname")
	g.Expect(env.Client.Create(ctx, topo)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, topo) })
	g.Expect(retryOnConflict(func() error {
		_ = env.Client.Get(ctx, clientKey(topo), topo)
		topo.Spec.Levels = topo.Spec.Levels[1:]
		return env.Client.Update(ctx, topo)
	})).To(MatchError(ContainSubstring("levels are immutable")))
}

func TestFlavorWithATopologyNeedsNodeLabels(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(env.Client.Create(ctx, MakeResourceFlavor("rf-topo-bare").TopologyName("fabric").Obj())).
		To(MatchError(ContainSubstring("a flavor with a topologyName must have nodeLabels")))
	rf := MakeResourceFlavor("rf-topo").NodeLabel("pool", "h100").TopologyName("fabric").Obj()
	g.Expect(env.Client.Create(ctx, rf)).To(Succeed())
	_ = env.Client.Delete(ctx, rf)
}

func TestWorkloadTopologyRequestValidation(t *testing.T) {
	cases := map[string]struct {
		req     musterv1beta1.PodSetTopologyRequest
		wantErr string
	}{
		"required":               {req: musterv1beta1.PodSetTopologyRequest{Required: ptr.To("rack")}},
		"required and preferred": {req: musterv1beta1.PodSetTopologyRequest{Required: ptr.To("rack"), Preferred: ptr.To("rack")}, wantErr: "at most one of required, preferred and unconstrained"},
		"slice without size":     {req: musterv1beta1.PodSetTopologyRequest{PodSetSliceRequiredTopology: ptr.To("rack")}, wantErr: "go together"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps := MakePodSet("main", 2).Request("nvidia.com/gpu", "1").Obj()
			ps.TopologyRequest = &tc.req
			wl := MakeWorkload("wl-topo", "default").Queue("lq").PodSets(ps).Obj()
			err := env.Client.Create(context.Background(), wl)
			if tc.wantErr == "" {
				NewWithT(t).Expect(err).To(Succeed())
				_ = env.Client.Delete(context.Background(), wl)
				return
			}
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}
