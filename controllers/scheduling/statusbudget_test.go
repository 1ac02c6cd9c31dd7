package scheduling

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestStatusBudget: a burst of queues writes at once; the rest get turns
// spread at the budget's rate, keep them when asked again early, and write
// when their time comes; a change of conditions never waits.
func TestStatusBudget(t *testing.T) {
	g := NewWithT(t)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	b := newStatusBudget(clk)
	for i := range queueStatusBurst {
		g.Expect(b.turn(fmt.Sprintf("q%d", i), false)).To(BeZero(), "within the burst")
	}
	first := b.turn("late-1", false)
	second := b.turn("late-2", false)
	g.Expect(first).To(BeNumerically("~", time.Second/queueStatusRate, time.Millisecond))
	g.Expect(second).To(BeNumerically("~", 2*time.Second/queueStatusRate, time.Millisecond))
	g.Expect(b.turn("late-1", false)).To(Equal(first), "asked again early: same turn, no second reservation")
	g.Expect(b.turn("urgent", true)).To(BeZero(), "a condition change goes now")
	clk.SetTime(clk.Now().Add(first))
	g.Expect(b.turn("late-1", false)).To(BeZero(), "its turn came")
	g.Expect(b.turn("late-2", true)).To(BeZero(), "urgent before its turn: goes now")
	g.Expect(b.turns).To(BeEmpty())
	b.turn("gone", false)
	b.forget("gone")
	g.Expect(b.turns).To(BeEmpty())
}

// A few queues are looked at a second after their workloads change; many
// no more often than the budget can write them.
func TestQueueStatusDelay(t *testing.T) {
	g := NewWithT(t)
	g.Expect(queueStatusDelay(1)).To(Equal(statusCoalesceDelay))
	g.Expect(queueStatusDelay(queueStatusRate)).To(Equal(statusCoalesceDelay))
	g.Expect(queueStatusDelay(1000)).To(Equal(1000 * time.Second / queueStatusRate))
}
