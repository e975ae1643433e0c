package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	readyTimeout = 90 * time.Second
	stopTimeout  = 15 * time.Second
)

// A process this run started, reaped as soon as it ends so that its exit
// status can be told (reportProcess) and it never lingers as a zombie.
type child struct {
	done chan struct{}
	cmd  *exec.Cmd
}

var (
	childrenMu sync.Mutex
	children   = map[int]*child{}
)

// startComponent starts command in a session of its own (so that stopOne
// ends its whole process group), stdin from /dev/null, stdout and stderr
// appended to DIR/logs/NAME.log, and writes DIR/NAME.pid.
func startComponent(dir, name string, env []string, command ...string) error {
	logFile, err := os.OpenFile(filepath.Join(dir, "logs", name+".log"),
		os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	c := &child{done: make(chan struct{}), cmd: cmd}
	childrenMu.Lock()
	children[cmd.Process.Pid] = c
	childrenMu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(c.done)
	}()
	return os.WriteFile(pidFile(dir, name), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
}

func pidFile(dir, name string) string { return filepath.Join(dir, name+".pid") }

func readPid(dir, name string) (int, bool) {
	data, err := os.ReadFile(pidFile(dir, name))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid, err == nil && pid > 0
}

// livePid: the pid in DIR/NAME.pid while that process is still one of ours,
// alive and started with DIR on its command line (a recycled pid is never
// taken for it, and a zombie, whose command line is empty, is not alive).
func livePid(dir, name string) (int, bool) {
	pid, ok := readPid(dir, name)
	if !ok {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
		return 0, false
	}
	return pid, true
}

// stopOne ends NAME's process group: SIGTERM, up to stopTimeout for it to
// go, then SIGKILL; and removes its pid file. Not itself (the watchdog
// stops the control plane it watches, its own pid file included).
func stopOne(dir, name string) {
	defer os.Remove(pidFile(dir, name))
	pid, ok := livePid(dir, name)
	if !ok || pid == os.Getpid() {
		return
	}
	signal := func(s syscall.Signal) {
		if syscall.Kill(-pid, s) != nil {
			_ = syscall.Kill(pid, s)
		}
	}
	signal(syscall.SIGTERM)
	for deadline := time.Now().Add(stopTimeout); time.Now().Before(deadline); {
		if syscall.Kill(pid, 0) != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	signal(syscall.SIGKILL)
}

// reportProcess says how NAME's process ended, or what it looks like if it
// runs, and its log's last lines: a start that fails says why, even when
// the process left no log.
func reportProcess(dir, name string) {
	pid, ok := readPid(dir, name)
	switch {
	case !ok:
		logf("%s: no pid file", name)
	case processState(pid) != "" && processState(pid) != "Z":
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if len(line) > 300 {
			line = line[:300]
		}
		logf("%s (pid %d) is running (state %s), command line: %s", name, pid, processState(pid), line)
	default:
		logf("%s (pid %d) %s", name, pid, exitOf(pid))
	}
	path := filepath.Join(dir, "logs", name+".log")
	lines := lastLines(path, 20)
	if len(lines) == 0 {
		logf("%s is empty", path)
		return
	}
	logf("last lines of %s:", path)
	for _, line := range lines {
		fmt.Fprintln(os.Stderr, line)
	}
}

// processState: the state letter of /proc/PID/stat ("" when gone).
func processState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name in parentheses may hold spaces: the state follows
	// the last ')'.
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return string(data[i+2])
	}
	return ""
}

func exitOf(pid int) string {
	childrenMu.Lock()
	c := children[pid]
	childrenMu.Unlock()
	if c == nil {
		return "has gone; its exit status is unknown (not this run's child)"
	}
	select {
	case <-c.done:
	case <-time.After(time.Second):
		return "has gone; its exit status is not known yet"
	}
	state := c.cmd.ProcessState
	if status, ok := state.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%v)", int(status.Signal()), status.Signal())
	}
	return fmt.Sprintf("exited with status %d", state.ExitCode())
}

func lastLines(path string, n int) []string {
	file, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer file.Close()
	var lines []string
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 64*1024), 1024*1024)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines
}

// waitFor polls probe until it succeeds. It fails, saying why, when NAME's
// process ends first or timeout passes.
func waitFor(what string, timeout time.Duration, dir, name string, probe func() bool) error {
	deadline := time.Now().Add(timeout)
	for !probe() {
		// A process in the middle of exec reads as an empty
		// /proc/PID/cmdline (seen under load: "exited" with nothing in its
		// log); look twice.
		if _, ok := livePid(dir, name); !ok {
			time.Sleep(300 * time.Millisecond)
			if _, ok := livePid(dir, name); !ok {
				logf("%s exited before %s", name, what)
				reportProcess(dir, name)
				return errNotReady
			}
		}
		if time.Now().After(deadline) {
			logf("%s: not ready after %d s", what, int(timeout.Seconds()))
			reportProcess(dir, name)
			return errNotReady
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

var errNotReady = errors.New("not ready")

// httpOK: a GET of url answers 2xx or 3xx, as curl -f counts success.
func httpOK(client *http.Client, url string) bool {
	response, err := client.Get(url)
	if err != nil {
		return false
	}
	response.Body.Close()
	return response.StatusCode < 400
}

var plainHTTP = &http.Client{Timeout: 5 * time.Second}

// The components serve HTTPS with certificates of their own making;
// /healthz is in their always-allowed paths, no credentials needed.
var anyTLS = &http.Client{Timeout: 5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// listeningPorts: the TCP ports something listens on, from /proc, so no ss
// or netstat is needed.
func listeningPorts() map[int]bool {
	ports := map[int]bool{}
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for port := range parseListening(string(data)) {
			ports[port] = true
		}
	}
	return ports
}

// parseListening reads /proc/net/tcp's format: "sl local_address
// rem_address st ...", the address as HEX-IP:HEX-PORT, state 0A listening.
func parseListening(table string) map[int]bool {
	ports := map[int]bool{}
	for _, line := range strings.Split(table, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 4 || fields[3] != "0A" {
			continue
		}
		colon := strings.LastIndexByte(fields[1], ':')
		if port, err := strconv.ParseInt(fields[1][colon+1:], 16, 32); colon >= 0 && err == nil {
			ports[int(port)] = true
		}
	}
	return ports
}

// pickPorts: n distinct ports nobody uses, below the kernel's ephemeral
// range (10000 up to ip_local_port_range's first port), so that no client's
// outgoing connection takes one between the pick and the bind: a
// controller's metrics port picked inside that range was once taken so
// after its health port answered, and the controller exited. A port can
// still be taken meanwhile: callers retry elsewhere.
func pickPorts(n int) []int {
	taken := usedPorts()
	low, high := portRange()
	var ports []int
	for len(ports) < n {
		port := low + rand.IntN(high-low)
		if !taken[port] {
			taken[port] = true
			ports = append(ports, port)
		}
	}
	return ports
}

// portRange: [10000, the first ephemeral port), or 20000-59999 where the
// ephemeral range leaves too little below it.
func portRange() (int, int) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if fields := strings.Fields(string(data)); len(fields) == 2 {
			if first, err := strconv.Atoi(fields[0]); err == nil && first >= 20000 {
				return 10000, first
			}
		}
	}
	return 20000, 60000
}

// usedPorts: every local TCP port in /proc, listening or connected.
func usedPorts() map[int]bool {
	ports := map[int]bool{}
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) < 4 {
				continue
			}
			colon := strings.LastIndexByte(fields[1], ':')
			if port, err := strconv.ParseInt(fields[1][colon+1:], 16, 32); colon >= 0 && err == nil {
				ports[int(port)] = true
			}
		}
	}
	return ports
}
