package harness

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ControlPlaneNice is the CPU priority the API server and etcd run at,
// above everything else on the machine (nice 0): on a cluster the control
// plane has machines of its own, and neither the system under test nor the
// harness's stand-ins for users and kubelets take CPU from it. At equal
// priority on two cores a creation burst starved the API server's watch
// dispatch: it closed every client's Workload watch (the system's and the
// kubelet's alike) 60-90 times in a minute, admissions reached the kubelet
// up to a minute late, and the workloads it had therefore not finished
// were what the systems evicted. Both systems run under the same priority.
const ControlPlaneNice = -10

// priorityKeeper holds the control plane's processes at ControlPlaneNice.
// A Linux thread's priority is its own, and a new thread inherits its
// creator's, so every thread is set, and again every interval to catch
// threads started while a pass ran.
type priorityKeeper struct {
	stop chan struct{}
	done chan struct{}

	mu  sync.Mutex
	err error
}

// keepPriority sets pids to nice now and every interval until stop. It
// fails if the first pass does (setting a negative nice needs
// CAP_SYS_NICE).
func keepPriority(pids []int, nice int, interval time.Duration) (*priorityKeeper, error) {
	pass := func() error {
		for _, pid := range pids {
			if err := setNice(pid, nice); err != nil {
				return err
			}
		}
		return nil
	}
	if err := pass(); err != nil {
		return nil, err
	}
	k := &priorityKeeper{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(k.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-k.stop:
				return
			case <-t.C:
				if err := pass(); err != nil {
					k.mu.Lock()
					k.err = err
					k.mu.Unlock()
				}
			}
		}
	}()
	return k, nil
}

// Stop ends the passes; it returns the last pass's error, if one failed.
func (k *priorityKeeper) Stop() error {
	if k == nil {
		return nil
	}
	close(k.stop)
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// setNice sets every thread of pid to nice. A thread or the process gone
// meanwhile is not an error: the process is stopping.
func setNice(pid, nice int) error {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("setting thread %d of process %d to nice %d: %w", tid, pid, nice, err)
		}
	}
	return nil
}

// niceOf is the priority of pid's main thread.
func niceOf(pid int) (int, error) {
	// getpriority's raw value is 20 - nice, so that it is never negative.
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, pid)
	return 20 - p, err
}
