package harness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is the system under test running as a child process.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Usage is what the kernel accounted to the child.
type Usage struct {
	// CPUSeconds is user plus system time.
	CPUSeconds float64 `json:"cpuSeconds"`
	// MaxRSSMiB is the child's peak resident set size.
	MaxRSSMiB float64 `json:"maxRSSMiB"`
	// MaxRSSOwn: MaxRSSMiB is the child's own peak (see Stop). Records
	// without it read rusage, the larger of the child's peak and the
	// harness's at the child's start.
	MaxRSSOwn bool `json:"maxRSSOwn,omitempty"`
}

// Launch is how a run starts the target.
type Launch struct {
	// Dir receives the target's log and any files it needs.
	Dir, Kubeconfig string
	QPS             float32
	Burst           int
	// Pprof, when set, is where the target serves profiles.
	Pprof string
	// TAS: the mix is topology-aware (Kueue then runs its TAS controllers).
	TAS bool
	// MultiClusterDispatcher, set in a multi-cluster run, makes the target
	// a manager of worker clusters with this dispatcher.
	MultiClusterDispatcher string
}

// StartProcess runs the target with its log in l.Dir.
func StartProcess(t Target, l Launch) (*Process, error) {
	if _, err := os.Stat(t.Binary); err != nil {
		return nil, fmt.Errorf("the %s binary is missing (make bench-bins): %w", t.Name, err)
	}
	args, err := t.args(l)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(l.Dir, t.Name+".log"))
	if err != nil {
		return nil, err
	}
	return startCmd(exec.Command(t.Binary, args...), logFile)
}

// startCmd starts cmd with its output in logFile, which it then owns.
func startCmd(cmd *exec.Cmd, logFile *os.File) (*Process, error) {
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), log: logFile}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Exited reports an early exit of the child.
func (p *Process) Exited() <-chan struct{} { return p.done }

// CPUSeconds reads the running child's CPU time from /proc.
func (p *Process) CPUSeconds() (float64, error) { return cpuSeconds(p.cmd.Process.Pid) }

// findProcess is the pid of the process whose command line contains s.
func findProcess(s string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), s) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no process with %q in its command line", s)
}

// cpuSeconds reads a process's CPU time (user + system) from /proc.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command name; utime and stime are the
	// 14th and 15th fields of the line, in clock ticks (100 per second).
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0, errors.New("short /proc stat line")
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (utime + stime) / 100, nil
}

// Stop reads the child's peak RSS, sends SIGTERM, waits for the exit
// (SIGKILL after 15 s) and returns its CPU time and that peak.
//
// The peak is the child's own high-water mark (VmHWM), read while it
// runs, not rusage's ru_maxrss: Go starts a child sharing the parent's
// memory until exec (CLONE_VM|CLONE_VFORK), and Linux keeps the replaced
// memory's high-water mark in ru_maxrss, so rusage reported the harness's
// own peak whenever that was the larger.
func (p *Process) Stop() (Usage, error) {
	defer p.log.Close()
	select {
	case <-p.done:
		return p.usage(), fmt.Errorf("the target exited early: %v (see %s)", p.cmd.ProcessState, p.log.Name())
	default:
	}
	peak, peakErr := peakRSSMiB(p.cmd.Process.Pid)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	u := p.usage()
	u.MaxRSSMiB, u.MaxRSSOwn = peak, peakErr == nil
	if peakErr != nil {
		return u, fmt.Errorf("the target's peak RSS: %w", peakErr)
	}
	return u, nil
}

// peakRSSMiB reads a process's peak resident set size (VmHWM) from /proc.
func peakRSSMiB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: %w", pid, err)
			}
			return kib / 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmHWM", pid)
}

func (p *Process) usage() Usage {
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Usage{}
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return Usage{CPUSeconds: cpu.Seconds(), MaxRSSMiB: float64(ru.Maxrss) / 1024}
}

// tailLog returns the last lines of the child's log, for error messages.
func (p *Process) tailLog(n int) string {
	f, err := os.Open(p.log.Name())
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// machineTicks are the machine's CPU ticks since boot, all cores: busy and
// in all (/proc/stat's first line; idle and iowait are not busy).
func machineTicks() (busy, total float64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("unexpected /proc/stat line %q", line)
	}
	for i, f := range fields[1:] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, 0, err
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return busy, total, nil
}

// machineLoad measures the share of all cores busy, and the harness's own
// CPU seconds, from start until its result is called.
func machineLoad() (func() (busyShare, harnessCPU float64), error) {
	busy0, total0, err := machineTicks()
	if err != nil {
		return nil, err
	}
	self0, err := cpuSeconds(os.Getpid())
	if err != nil {
		return nil, err
	}
	return func() (float64, float64) {
		busy1, total1, err1 := machineTicks()
		self1, err2 := cpuSeconds(os.Getpid())
		if err1 != nil || err2 != nil || total1 <= total0 {
			return 0, 0 // not measured (JSON has no NaN)
		}
		return (busy1 - busy0) / (total1 - total0), self1 - self0
	}, nil
}
