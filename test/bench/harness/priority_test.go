package harness

import (
	"os/exec"
	"testing"
	"time"
)

// sleeper is a child process to set priorities on: lowering a priority
// (a higher nice) needs no privilege, so the test runs as any user.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

func TestKeepPrioritySetsEveryPass(t *testing.T) {
	pid := sleeper(t)
	k, err := keepPriority([]int{pid}, 7, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := niceOf(pid); err != nil || n != 7 {
		t.Errorf("nice %d (%v), want 7 after the first pass", n, err)
	}
	time.Sleep(30 * time.Millisecond) // a few passes; their result is the same
	if err := k.Stop(); err != nil {
		t.Errorf("passes failed: %v", err)
	}
	if n, _ := niceOf(pid); n != 7 {
		t.Errorf("nice %d after the passes, want 7", n)
	}
}

// niceAllowed is the control plane's priority a run gets here: raising a
// priority needs CAP_SYS_NICE, which root in a container may lack.
func niceAllowed(t *testing.T) int {
	if setNice(sleeper(t), ControlPlaneNice) == nil {
		return ControlPlaneNice
	}
	return 0
}

func TestSetNiceOfAProcessGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := setNice(cmd.Process.Pid, 5); err != nil {
		t.Errorf("a process that stopped meanwhile: %v, want no error", err)
	}
}

func TestStopOfNoKeeper(t *testing.T) {
	var k *priorityKeeper
	if err := k.Stop(); err != nil {
		t.Errorf("no keeper (the priority could not be raised): %v", err)
	}
}
