package main

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var testTools = tools{repoRoot: "/repo", k8sBin: "/k8s", k8sCompatBin: "/k8s-1.34",
	k8sVersion: "v1.36.3", k8sCompatVersion: "v1.34.10"}

func TestParseStartReadsEveryFlagInAnyOrder(t *testing.T) {
	o, err := parseStart([]string{"--cluster", "--karpenter", "DIR", "--owner-pid", "42", "--audit",
		"--no-rollouts", "--pools", "p.yaml", "--prices", "policy.yaml", "--kinds", "kuberay",
		"--", "--v", "2", "--audit"}, testTools)
	if err != nil {
		t.Fatal(err)
	}
	want := startOptions{dir: "DIR", owner: 42, audit: true, cluster: true, pools: "p.yaml",
		karpenter: true, noRollouts: true, prices: "policy.yaml", kinds: []string{"kuberay"},
		apiBin: "/k8s", version: "v1.36.3",
		apiServerFlags: []string{"--v", "2", "--audit"}}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("got %+v\nwant %+v", o, want)
	}
}

func TestParseStartDefaults(t *testing.T) {
	for _, c := range []struct {
		args       []string
		pools      string
		apiBin     string
		apiVersion string
	}{
		{[]string{"DIR"}, "", "/k8s", "v1.36.3"},
		{[]string{"DIR", "--cluster"}, "/repo/config/sim/default.yaml", "/k8s", "v1.36.3"},
		{[]string{"DIR", "--cluster", "--karpenter"}, "/repo/config/sim/karpenter-launch.yaml", "/k8s", "v1.36.3"},
		{[]string{"DIR", "--kubernetes", "1.34"}, "", "/k8s-1.34", "v1.34.10"},
	} {
		o, err := parseStart(c.args, testTools)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if o.pools != c.pools || o.apiBin != c.apiBin || o.version != c.apiVersion {
			t.Errorf("%v: pools %q, binaries %q %q; want %q, %q %q", c.args, o.pools, o.apiBin,
				o.version, c.pools, c.apiBin, c.apiVersion)
		}
	}
}

func TestParseStartRefusesWhatDoesNotGoTogether(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string // "" for the usage
	}{
		{[]string{}, ""},
		{[]string{"A", "B"}, ""},
		{[]string{"DIR", "--bogus"}, "unknown option --bogus"},
		{[]string{"DIR", "--owner-pid"}, "--owner-pid needs a pid"},
		{[]string{"DIR", "--owner-pid", "me"}, `--owner-pid: "me" is not a pid`},
		{[]string{"DIR", "--pools"}, "--pools needs a file"},
		{[]string{"DIR", "--karpenter"}, "add --cluster"},
		{[]string{"DIR", "--cluster", "--karpenter-later"}, "--karpenter-later defers Karpenter: add --karpenter"},
		{[]string{"DIR", "--cluster", "--karpenter", "--karpenter-later", "--prices", "p"}, "no --prices"},
		{[]string{"DIR", "--no-rollouts"}, "--no-rollouts trims"},
		{[]string{"DIR", "--cluster", "--prices", "p"}, "--prices sets the prices Karpenter"},
		{[]string{"DIR", "--pools", "p"}, "--pools names the simulated cluster's pool file"},
		{[]string{"DIR", "--kubernetes", "1.33"}, "--kubernetes: 1.33 is not a line this project tests"},
		{[]string{"DIR", "--kubernetes", "1.34", "--cluster"}, "not --cluster"},
		{[]string{"DIR", "--kinds", "kuberay"}, "--kinds runs controllers in the simulated cluster: add --cluster"},
		{[]string{"DIR", "--cluster", "--kinds"}, "--kinds needs a list of kinds (kuberay,lws,jobset,trainer,kueue)"},
		{[]string{"DIR", "--cluster", "--kinds", "kuberay,trainjob"}, `--kinds: "trainjob" is not a kind`},
		{[]string{"DIR", "--cluster", "--kinds", "lws,"}, `--kinds: "" is not a kind`},
		{[]string{"DIR", "--cluster", "--kinds", "trainer"}, "--kinds trainer needs jobset too"},
		{[]string{"DIR", "--cluster", "--no-rollouts", "--kinds", "lws"}, "--kinds lws needs the StatefulSet controller"},
		{[]string{"DIR", "--cluster", "--no-rollouts", "--kinds", "jobset"}, "--kinds jobset needs the Job controller"},
	} {
		_, err := parseStart(c.args, testTools)
		switch {
		case err == nil:
			t.Errorf("%v: accepted", c.args)
		case c.says == "" && err != errUsage:
			t.Errorf("%v: %v, want the usage", c.args, err)
		case c.says != "" && !strings.Contains(err.Error(), c.says):
			t.Errorf("%v: %q does not say %q", c.args, err, c.says)
		}
	}
}

// --kinds: each kind once, in the order they start, however given.
func TestParseStartReadsKinds(t *testing.T) {
	for list, want := range map[string][]string{
		"lws":                  {"lws"},
		"lws,kuberay":          {"kuberay", "lws"},
		"kuberay, lws,kuberay": {"kuberay", "lws"},
		"jobset,lws,kuberay":   {"kuberay", "lws", "jobset"},
		"trainer,jobset":       {"jobset", "trainer"},
		"kueue":                {"kueue"},
		"kueue,jobset,kuberay": {"kuberay", "jobset", "kueue"},
	} {
		o, err := parseStart([]string{"DIR", "--cluster", "--kinds", list}, testTools)
		if err != nil {
			t.Fatalf("%q: %v", list, err)
		}
		if !reflect.DeepEqual(o.kinds, want) {
			t.Errorf("%q: kinds %q, want %q", list, o.kinds, want)
		}
	}
}

func TestParseListeningReadsProcNetTCP(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:8CF5 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:9C41 0100007F:8CF5 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0000000000000000 20 4 30 10 -1
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 3 1
`
	got := parseListening(table)
	want := map[int]bool{0x8CF5: true, 8080: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v (an established connection's port is not listening)", got, want)
	}
}

func TestPickPortsAreDistinctAndFree(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	if !listeningPorts()[listener.Addr().(*net.TCPAddr).Port] {
		t.Fatalf("listeningPorts misses %v", listener.Addr())
	}
	ports := pickPorts(50)
	seen := map[int]bool{}
	for _, port := range ports {
		if low, high := portRange(); port < low || port >= high || seen[port] {
			t.Fatalf("port %d out of range or twice in %v", port, ports)
		}
		seen[port] = true
	}
}

// pemBlock: the one PEM block of kind in the file at path.
func pemBlock(t *testing.T, path, kind string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != kind {
		t.Fatalf("%s: no %s", path, kind)
	}
	return block.Bytes
}

func readCertificate(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	cert, err := x509.ParseCertificate(pemBlock(t, path, "CERTIFICATE"))
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// readKey: a PKCS #8 key, as openssl genpkey writes it.
func readKey(t *testing.T, path string) any {
	t.Helper()
	key, err := x509.ParsePKCS8PrivateKey(pemBlock(t, path, "PRIVATE KEY"))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestPKIIsWhatTheAPIServerAndItsClientsNeed(t *testing.T) {
	dir := t.TempDir()
	if err := generatePKI(dir); err != nil {
		t.Fatal(err)
	}
	if err := generateClusterPKI(dir); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCertificate(t, filepath.Join(dir, "ca.crt")))
	verify := func(name string, usage x509.ExtKeyUsage, host string) *x509.Certificate {
		cert := readCertificate(t, filepath.Join(dir, name+".crt"))
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: host,
			KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if info, err := os.Stat(filepath.Join(dir, name+".key")); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s.key: %v, mode %v; want 0600", name, err, info.Mode().Perm())
		}
		return cert
	}
	for _, host := range append([]string{"127.0.0.1", "10.0.0.1"}, apiServerNames...) {
		verify("apiserver", x509.ExtKeyUsageServerAuth, host)
	}
	admin := verify("admin", x509.ExtKeyUsageClientAuth, "")
	if admin.Subject.CommonName != "admin" || !reflect.DeepEqual(admin.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("admin's subject: %v", admin.Subject)
	}
	for _, name := range []string{"kube-scheduler", "kube-controller-manager"} {
		if cert := verify(name, x509.ExtKeyUsageClientAuth, ""); cert.Subject.CommonName != "system:"+name {
			t.Errorf("%s's subject: %v", name, cert.Subject)
		}
	}
	if ca := readCertificate(t, filepath.Join(dir, "ca.crt")); !ca.IsCA || ca.NotAfter.Before(time.Now().Add(3000*24*time.Hour)) {
		t.Errorf("the CA: IsCA %v, until %v", ca.IsCA, ca.NotAfter)
	}

	// The service-account pair: sa.pub is sa.key's public half.
	public, err := x509.ParsePKIXPublicKey(pemBlock(t, filepath.Join(dir, "sa.pub"), "PUBLIC KEY"))
	if err != nil {
		t.Fatal(err)
	}
	if key, ok := readKey(t, filepath.Join(dir, "sa.key")).(*rsa.PrivateKey); !ok || !key.PublicKey.Equal(public) {
		t.Error("sa.key is not an RSA key, or sa.pub is not its public key")
	}
	if _, ok := readKey(t, filepath.Join(dir, "admin.key")).(*ecdsa.PrivateKey); !ok {
		t.Error("admin.key is not an EC key")
	}
}

// The probe of /readyz: a server with the API server's certificate that
// asks for a client certificate from the CA answers the admin's client.
func TestAdminClientIsTrustedByTheAPIServersCertificates(t *testing.T) {
	dir := t.TempDir()
	if err := generatePKI(dir); err != nil {
		t.Fatal(err)
	}
	serving, err := tls.LoadX509KeyPair(filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	clients := x509.NewCertPool()
	clients.AddCert(readCertificate(t, filepath.Join(dir, "ca.crt")))
	var who string
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who = r.TLS.PeerCertificates[0].Subject.CommonName
	}))
	server.TLS = &tls.Config{Certificates: []tls.Certificate{serving}, ClientCAs: clients,
		ClientAuth: tls.RequireAndVerifyClientCert}
	server.StartTLS()
	defer server.Close()
	client, err := adminHTTPClient(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !httpOK(client, server.URL+"/readyz") || who != "admin" {
		t.Errorf("the admin's GET was not answered (client %q)", who)
	}
	if httpOK(plainHTTP, server.URL+"/readyz") {
		t.Error("a client without the CA was answered")
	}
}

func TestKubeconfigNamesTheServerAndCarriesTheCertificates(t *testing.T) {
	dir := t.TempDir()
	if err := generatePKI(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(dir, 6443, "admin", path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, want := range []string{"server: https://127.0.0.1:6443\n", "certificate-authority-data: LS0t",
		"client-certificate-data: LS0t", "client-key-data: LS0t", "current-context: local\n"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("kubeconfig lacks %q", want)
		}
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600", info.Mode().Perm())
	}
}

// startIn starts `sh -c script` as NAME in a fresh directory with its logs
// there; DIR on its command line makes it DIR's.
func startIn(t *testing.T, name, script string) (dir string, pid int) {
	t.Helper()
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := startComponent(dir, name, nil, "sh", "-c", script, dir); err != nil {
		t.Fatal(err)
	}
	pid, ok := readPid(dir, name)
	if !ok {
		t.Fatalf("no pid file for %s", name)
	}
	return dir, pid
}

// A process is DIR's while it runs with DIR on its command line; stopOne
// ends it (SIGTERM to its group is enough) and its pid file; a pid file
// naming another process is not ours.
func TestProcessesAreKnownByTheirDirectoryAndStopped(t *testing.T) {
	dir, pid := startIn(t, "sleeper", "sleep 600")
	if got, ok := livePid(dir, "sleeper"); !ok || got != pid {
		t.Fatal("the started process is not live")
	}
	if err := os.WriteFile(pidFile(dir, "other"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := livePid(dir, "other"); ok {
		t.Error("a process without DIR on its command line counts as DIR's")
	}
	stopOne(dir, "sleeper")
	if _, ok := livePid(dir, "sleeper"); ok {
		t.Error("still running after stopOne")
	}
	if got := exitOf(pid); got != "was killed by signal 15 (terminated)" {
		t.Errorf("ended by %q, not by the SIGTERM", got)
	}
	if _, err := os.Stat(pidFile(dir, "sleeper")); !os.IsNotExist(err) {
		t.Error("the pid file stays")
	}
	stopOne(dir, "sleeper") // twice is harmless
}

// A process that ends before it is ready fails the wait as soon as it has
// gone (were it to wait for the deadline, go test's own timeout would end
// the run), and the report gives its exit status and its log.
func TestWaitForSaysHowAProcessEnded(t *testing.T) {
	dir, pid := startIn(t, "quitter", "echo no such flag; exit 3")
	if err := waitFor("ready", 24*time.Hour, dir, "quitter", func() bool { return false }); err != errNotReady {
		t.Fatalf("waitFor: %v", err)
	}
	if got := exitOf(pid); got != "exited with status 3" {
		t.Errorf("exitOf: %q", got)
	}
	if lines := lastLines(filepath.Join(dir, "logs", "quitter.log"), 20); !reflect.DeepEqual(lines, []string{"no such flag"}) {
		t.Errorf("log: %q", lines)
	}
}

// LWS's webhooks: a serving certificate for 127.0.0.1 from the control
// plane's CA, and the four webhooks of its release called by URL on the
// port, trusting that CA; its pod webhooks only for a LeaderWorkerSet's pods.
func TestLWSWebhooksAreServedOnLocalhostWithTheClusterCA(t *testing.T) {
	dir := t.TempDir()
	if err := generatePKI(dir); err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "lws-webhook")
	if err := generateWebhookCertificate(dir, certDir, "lws-webhook"); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCertificate(t, filepath.Join(dir, "ca.crt")))
	if _, err := readCertificate(t, filepath.Join(certDir, "tls.crt")).Verify(x509.VerifyOptions{Roots: roots,
		DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Error(err)
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key")); err != nil {
		t.Error(err)
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	text := lwsController.webhookConfigurations(9443, ca)
	for _, want := range []string{
		"url: https://127.0.0.1:9443/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset\n",
		"url: https://127.0.0.1:9443/mutate--v1-pod\n",
		"url: https://127.0.0.1:9443/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset\n",
		"url: https://127.0.0.1:9443/validate--v1-pod\n",
		"- name: mpod.kb.io\n", "- name: vleaderworkerset.kb.io\n",
		"caBundle: " + base64.StdEncoding.EncodeToString(ca) + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the webhook configurations lack %q", want)
		}
	}
	if got := strings.Count(text, "- {key: leaderworkerset.sigs.k8s.io/name, operator: Exists}"); got != 2 {
		t.Errorf("%d pod webhooks select a LeaderWorkerSet's pods, want 2", got)
	}
	if got := strings.Count(text, "operations: [CREATE, UPDATE]"); got != 4 {
		t.Errorf("%d of LWS's webhooks take creates and updates, want 4", got)
	}
}

// JobSet's webhooks as its release (with its patches) registers them: the
// defaulting one on create only, the validating one on create and update
// (it refuses template changes but while suspended), its pod webhooks only
// for a JobSet's pods, and names of their own beside LWS's.
func TestJobSetWebhooksAreItsReleases(t *testing.T) {
	text := jobsetController.webhookConfigurations(9444, []byte("ca"))
	for _, want := range []string{
		"  name: jobset-mutating-webhook-configuration\n",
		"  name: jobset-validating-webhook-configuration\n",
		"- name: mjobset.kb.io\n  admissionReviewVersions: [v1]\n  clientConfig:\n" +
			"    url: https://127.0.0.1:9444/mutate-jobset-x-k8s-io-v1alpha2-jobset\n",
		"url: https://127.0.0.1:9444/validate-jobset-x-k8s-io-v1alpha2-jobset\n",
		"  - apiGroups: [\"jobset.x-k8s.io\"]\n    apiVersions: [v1alpha2]\n    operations: [CREATE]\n",
		"  - apiGroups: [\"jobset.x-k8s.io\"]\n    apiVersions: [v1alpha2]\n    operations: [CREATE, UPDATE]\n",
		"  - apiGroups: [\"\"]\n    apiVersions: [v1]\n    operations: [CREATE]\n    resources: [pods]\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the webhook configurations lack %q:\n%s", want, text)
		}
	}
	if got := strings.Count(text, "- {key: jobset.sigs.k8s.io/jobset-name, operator: Exists}"); got != 2 {
		t.Errorf("%d pod webhooks select a JobSet's pods, want 2", got)
	}
	if config := jobsetController.configuration([]int{1, 2, 3}, "/c"); !strings.HasPrefix(config,
		"apiVersion: config.jobset.x-k8s.io/v1alpha1\nkind: Configuration\n") {
		t.Errorf("configuration: %q", config)
	}
}

// Kueue starts last, after the kinds it queues (their CRDs there when it
// sets up their integrations), with batch/job always and the integrations
// of the kinds beside it only; leader election off, its own certificate
// management on (no certificate at /etc/kueue/metrics/certs needed), its
// webhook on 127.0.0.1 with its certificates in the cluster's directory,
// the visibility server off.
func TestKueueConfigurationEnablesTheKindsBesideIt(t *testing.T) {
	if knownKinds[len(knownKinds)-1] != "kueue" {
		t.Errorf("kinds start in the order %v: kueue is not last", knownKinds)
	}
	// stop ends each kind's controller (it ended every one but Kueue's
	// before this test).
	for _, kind := range knownKinds {
		if !slices.Contains(clusterProcesses, kind) {
			t.Errorf("stop leaves %s's controller running: not in %v", kind, clusterProcesses)
		}
	}
	alone := kueueConfiguration([]int{1, 2, 3}, "/d/pki/kueue-webhook", []string{"kueue"})
	for _, want := range []string{
		"apiVersion: config.kueue.x-k8s.io/v1beta2\n", "namespace: kueue-system\n",
		"leaderElection:\n  leaderElect: false\n",
		"internalCertManagement:\n  enable: true\n  webhookServiceName: kueue-webhook-service\n" +
			"  webhookSecretName: kueue-webhook-server-cert\n",
		"metrics:\n  bindAddress: 127.0.0.1:1\n", "health:\n  healthProbeBindAddress: 127.0.0.1:2\n",
		"webhook:\n  host: 127.0.0.1\n  port: 3\n  certDir: /d/pki/kueue-webhook\n",
		"featureGates:\n  VisibilityOnDemand: false\n", "frameworks: [batch/job]\n",
	} {
		if !strings.Contains(alone, want) {
			t.Errorf("Kueue's configuration lacks %q:\n%s", want, alone)
		}
	}
	all := kueueConfiguration([]int{1, 2, 3}, "/d", []string{"kuberay", "lws", "jobset", "trainer", "kueue"})
	want := "frameworks: [batch/job, ray.io/rayjob, ray.io/raycluster, leaderworkerset.x-k8s.io/leaderworkerset, " +
		"jobset.x-k8s.io/jobset, trainer.kubeflow.org/trainjob]\n"
	if !strings.Contains(all, want) {
		t.Errorf("Kueue's configuration with every kind lacks %q:\n%s", want, all)
	}
	if strings.Contains(all, "pod\"") || strings.Contains(all, " pod,") || strings.Contains(all, " pod]") {
		t.Errorf("Kueue's configuration enables the pod integration:\n%s", all)
	}
}

// Kueue's webhooks: by its Service (the name its certificate is for) on
// the webhook's port, in the two configurations its rotator injects its CA
// into; the Job's mutating one (it suspends a queued Job) always, those of
// the kinds not started beside it never; the integrations' not for
// kube-system or Kueue's namespace; the pod webhooks only with lws.
func TestKueueWebhooksAreReachedThroughItsService(t *testing.T) {
	alone := kueueWebhookManifest(9445, []string{"kueue"})
	for _, want := range []string{
		"kind: Namespace\nmetadata: {name: kueue-system}\n",
		"kind: Secret\nmetadata: {name: kueue-webhook-server-cert, namespace: kueue-system}\n",
		"metadata: {name: kueue-webhook-service, namespace: kueue-system}\nspec: {type: ExternalName, externalName: 127.0.0.1}\n",
		"  name: kueue-mutating-webhook-configuration\n", "  name: kueue-validating-webhook-configuration\n",
		"- name: mjob.kb.io\n  admissionReviewVersions: [v1]\n  clientConfig:\n" +
			"    service: {name: kueue-webhook-service, namespace: kueue-system, port: 9445, path: /mutate-batch-v1-job}\n" +
			"  failurePolicy: Fail\n  sideEffects: None\n  namespaceSelector:\n    matchExpressions:\n" +
			"    - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kueue-system]}\n" +
			"  rules:\n  - apiGroups: [\"batch\"]\n    apiVersions: [v1]\n    operations: [CREATE]\n    resources: [jobs]\n",
		"- name: vworkload.kb.io\n", "resources: [workloads, workloads/status]\n",
		"path: /validate-kueue-x-k8s-io-v1beta2-clusterqueue}\n",
	} {
		if !strings.Contains(alone, want) {
			t.Errorf("Kueue's webhooks alone lack %q:\n%s", want, alone)
		}
	}
	for _, absent := range []string{"jobset", "ray.io", "pod.kb.io", "trainjob", "leaderworkerset", "url:"} {
		if strings.Contains(alone, absent) {
			t.Errorf("Kueue's webhooks alone name %q:\n%s", absent, alone)
		}
	}
	if got := strings.Count(alone, "namespaceSelector"); got != 2 {
		t.Errorf("%d of Kueue's webhooks alone leave kube-system out, want the Job's 2", got)
	}
	all := kueueWebhookManifest(9445, []string{"kuberay", "lws", "jobset", "trainer", "kueue"})
	for _, name := range []string{"rayjob", "raycluster", "jobset", "leaderworkerset", "pod", "trainjob"} {
		for _, verb := range []string{"m", "v"} {
			if !strings.Contains(all, "- name: "+verb+name+".kb.io\n") {
				t.Errorf("Kueue's webhooks with every kind lack %s%s.kb.io", verb, name)
			}
		}
	}
	if !strings.Contains(kueueConversionPatch(9445), `"service":{"name":"kueue-webhook-service",`+
		`"namespace":"kueue-system","path":"/convert","port":9445}`) {
		t.Errorf("the conversion patch is %s", kueueConversionPatch(9445))
	}
}
