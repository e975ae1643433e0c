package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// startControlPlaneProcesses starts etcd and kube-apiserver (the one
// DIR/kube-apiserver.bin names) on ports picked
// here, three tries on other ports when a start fails; returns the API
// server's port once /readyz answers ok.
func startControlPlaneProcesses(dir, etcdBin string, extra []string) (int, error) {
	for attempt := 1; ; attempt++ {
		ports := pickPorts(3)
		if startEtcdAndAPIServer(dir, etcdBin, ports[0], ports[1], ports[2], extra) == nil {
			return ports[2], nil
		}
		stopAll(dir)
		if attempt == 3 {
			return 0, fail("the control plane did not start; logs are in %s/logs", dir)
		}
		logf("retrying with other ports")
		if err := os.RemoveAll(filepath.Join(dir, "etcd")); err != nil {
			return 0, err
		}
	}
}

func startEtcdAndAPIServer(dir, etcdBin string, etcdPort, peerPort, apiPort int, extra []string) error {
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	if err := startComponent(dir, "etcd", nil, filepath.Join(etcdBin, "etcd"), "--name", "default",
		"--data-dir", filepath.Join(dir, "etcd"), "--listen-client-urls", etcdURL,
		"--advertise-client-urls", etcdURL, "--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL, "--initial-cluster", "default="+peerURL,
		"--unsafe-no-fsync", "--log-level", "warn"); err != nil {
		return err
	}
	if err := waitFor("etcd health", 30*time.Second, dir, "etcd",
		func() bool { return httpOK(plainHTTP, etcdURL+"/health") }); err != nil {
		return err
	}
	pki := filepath.Join(dir, "pki")
	args := append([]string{
		"--etcd-servers", etcdURL, "--cert-dir", pki,
		"--secure-port", strconv.Itoa(apiPort), "--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--tls-cert-file", filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file", filepath.Join(pki, "apiserver.key"),
		"--client-ca-file", filepath.Join(pki, "ca.crt"),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", fmt.Sprintf("https://127.0.0.1:%d", apiPort),
		"--service-account-key-file", filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range", "10.0.0.0/24", "--allow-privileged=true",
		"--disable-admission-plugins", "ServiceAccount",
		"--endpoint-reconciler-type", "none", "--profiling=false",
	}, extra...)
	// Kept so restart-apiserver can start the same server again.
	var kept bytes.Buffer
	for _, arg := range args {
		kept.WriteString(arg)
		kept.WriteByte(0)
	}
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver.args"), kept.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "kube-apiserver.port"), []byte(strconv.Itoa(apiPort)+"\n"), 0o644); err != nil {
		return err
	}
	return startAPIServer(dir)
}

// startAPIServer starts kube-apiserver as DIR's kube-apiserver.bin,
// .args and .port say, and waits for /readyz.
func startAPIServer(dir string) error {
	binDir, err := os.ReadFile(filepath.Join(dir, "kube-apiserver.bin"))
	if err != nil {
		return err
	}
	argData, err := os.ReadFile(filepath.Join(dir, "kube-apiserver.args"))
	if err != nil {
		return err
	}
	port, err := apiServerPort(dir)
	if err != nil {
		return err
	}
	args := strings.Split(strings.TrimSuffix(string(argData), "\x00"), "\x00")
	command := append([]string{filepath.Join(string(trimLine(binDir)), "kube-apiserver")}, args...)
	if err := startComponent(dir, "kube-apiserver", nil, command...); err != nil {
		return err
	}
	client, err := adminHTTPClient(filepath.Join(dir, "pki"))
	if err != nil {
		return err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", port)
	return waitFor("kube-apiserver /readyz", readyTimeout, dir, "kube-apiserver",
		func() bool { return httpOK(client, url) })
}

func apiServerPort(dir string) (int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kube-apiserver.port"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// adminHTTPClient: trusts the control plane's CA, presents the admin's
// client certificate.
func adminHTTPClient(pki string) (*http.Client, error) {
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s/ca.crt holds no certificate", pki)
	}
	admin, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{admin}}}}, nil
}

// restartAPIServer stops kube-apiserver and starts it again on the same
// port, etcd untouched: what a control-plane upgrade or crash looks like
// to a watching client.
func restartAPIServer(dir string) error {
	if _, ok := livePid(dir, "etcd"); !ok {
		return fail("no control plane is running in %s", dir)
	}
	began := time.Now()
	stopOne(dir, "kube-apiserver")
	if err := startAPIServer(dir); err != nil {
		return fail("kube-apiserver did not come back; logs in %s/logs", dir)
	}
	logf("kube-apiserver restarted in %d s", seconds(began))
	return nil
}
