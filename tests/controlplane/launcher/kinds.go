package main

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The real controllers of the kinds GPU work runs as that start --kinds
// runs beside the simulated cluster, in the order they start: KubeRay's
// operator (RayCluster, RayService, RayJob), the LeaderWorkerSet controller,
// the JobSet controller and Kubeflow Trainer v2's controller manager
// (TrainJob, which runs as a JobSet: after the JobSet controller, never
// without it), and Kueue's controller manager last (kueue.go: it queues
// and admits Jobs and those of the other kinds started beside it, whose
// CRDs are then there when it sets up their integrations). Each is a process of this machine, as Karpenter is: the admin
// kubeconfig, no leader election, metrics and health on ports picked here;
// its CRDs, which scripts/setup copies from its module into crds/ beside
// its bin/, are installed and Established before it starts.
var knownKinds = []string{"kuberay", "lws", "jobset", "trainer", "kueue"}

// parseKinds reads --kinds' comma-separated list: known kinds only, each
// once, in knownKinds' order.
func parseKinds(list string) ([]string, error) {
	var kinds []string
	for _, kind := range strings.Split(list, ",") {
		kind = strings.TrimSpace(kind)
		if !slices.Contains(knownKinds, kind) {
			return nil, fail("--kinds: %q is not a kind whose controller this can run (%s)",
				kind, strings.Join(knownKinds, ", "))
		}
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	slices.SortFunc(kinds, func(a, b string) int {
		return slices.Index(knownKinds, a) - slices.Index(knownKinds, b)
	})
	if slices.Contains(kinds, "trainer") && !slices.Contains(kinds, "jobset") {
		return nil, fail("--kinds trainer needs jobset too: a TrainJob runs as a JobSet")
	}
	return kinds, nil
}

// kindBinary: the controller's binary, as scripts/setup names it.
func (t tools) kindBinary(kind string) string {
	switch kind {
	case "kuberay":
		return filepath.Join(t.kuberayBin, "ray-operator")
	case "lws":
		return filepath.Join(t.lwsBin, "lws")
	case "trainer":
		return filepath.Join(t.trainerBin, "trainer-controller-manager")
	case "kueue":
		return filepath.Join(t.kueueBin, "kueue")
	}
	return filepath.Join(t.jobsetBin, "jobset")
}

// kindCRDs: the directory of the controller's CRDs, crds/ beside its bin/.
func (t tools) kindCRDs(kind string) string {
	return filepath.Join(filepath.Dir(filepath.Dir(t.kindBinary(kind))), "crds")
}

// startKinds installs each kind's CRDs and starts its controller; what it
// started is kept in DIR/cluster.kinds for restart-kinds.
func startKinds(dir string, kinds []string, t tools) error {
	if err := os.WriteFile(filepath.Join(dir, "cluster.kinds"), []byte(strings.Join(kinds, ",")+"\n"), 0o644); err != nil {
		return err
	}
	for _, kind := range kinds {
		if err := installCRDs(dir, kind, t); err != nil {
			return err
		}
		if err := startKind(dir, kind, kinds, t); err != nil {
			return err
		}
	}
	return nil
}

// installCRDs applies the kind's CRDs (server-side: KubeRay's are too large
// for the annotation a client-side apply writes) and waits for them to be
// Established, so the controller's informers find them at start.
func installCRDs(dir, kind string, t tools) error {
	kubectl := filepath.Join(t.k8sBin, "kubectl")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := runLogged(dir, kind+"-crds", kubectl, "--kubeconfig", kubeconfig, "apply",
		"--server-side", "--force-conflicts", "-f", t.kindCRDs(kind)); err != nil {
		return err
	}
	// kubectl wait fails at once, not waiting, on a CRD whose status has no
	// conditions yet (".status.conditions accessor error"): again until
	// the deadline.
	deadline := time.Now().Add(crdsTimeout)
	for {
		output, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "wait", "--for", "condition=Established",
			"--timeout", crdsTimeout.String(), "-f", t.kindCRDs(kind)).CombinedOutput()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			logf("%s's CRDs are not Established after %v: %s", kind, crdsTimeout, strings.TrimSpace(string(output)))
			return fmt.Errorf("%s's CRDs are not Established", kind)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const crdsTimeout = 60 * time.Second

// startKind starts kind's controller, one of kinds.
func startKind(dir, kind string, kinds []string, t tools) error {
	switch kind {
	case "kuberay":
		return startKubeRay(dir, t)
	case "lws":
		return startWebhookController(dir, lwsController, t)
	case "trainer":
		return startTrainer(dir, t)
	case "kueue":
		return startKueue(dir, kinds, t)
	}
	return startWebhookController(dir, jobsetController, t)
}

// The names Trainer v2.0.0 gives its webhook's pieces, fixed in its code
// (pkg/util/cert: the namespace when it runs outside a pod, the Service
// its certificate is made for, the Secret it keeps the CA in) and its
// manifests (the ValidatingWebhookConfiguration it injects the CA into).
const (
	trainerNamespace = "kubeflow-system"
	trainerService   = "kubeflow-trainer-controller-manager"
	trainerSecret    = "kubeflow-trainer-webhook-cert"
	trainerWebhooks  = "validator.trainer.kubeflow.org"
)

// startTrainer: Kubeflow Trainer v2's controller manager, with its
// validating webhooks (TrainJob: among others, podSpecOverrides change only
// in a write that leaves the TrainJob suspended; the runtimes). It cannot
// turn off its certificate management: it makes its own CA and a serving
// certificate for trainerService.kubeflow-system.svc, keeps them in
// trainerSecret (which must exist), waits for them in trainerCertDir (in
// its pod, a mount of that Secret: here mountCerts writes them),
// and injects the CA into trainerWebhooks; it is ready once it has. So the
// API server reaches it
// the way it reaches a webhook in a pod, through that Service, here an
// ExternalName one naming 127.0.0.1 (kube-apiserver resolves an
// ExternalName Service to its name and the webhook's port, and checks the
// certificate against the Service's DNS name). Once it is ready, the
// runtimes it ships (torch-distributed among them) are applied.
func startTrainer(dir string, t tools) error {
	kubectl := filepath.Join(t.k8sBin, "kubectl")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	err := startController(dir, "trainer", nil, 3, func(ports []int) ([]string, error) {
		manifest := filepath.Join(dir, "trainer.webhooks.yaml")
		if err := os.WriteFile(manifest, []byte(trainerWebhookManifest(ports[2])), 0o644); err != nil {
			return nil, err
		}
		if err := runLogged(dir, "trainer-crds", kubectl, "--kubeconfig", kubeconfig, "apply",
			"--server-side", "--force-conflicts", "-f", manifest); err != nil {
			return nil, err
		}
		return []string{t.kindBinary("trainer"), "--kubeconfig", kubeconfig,
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0]), "--metrics-secure=false",
			"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[1]),
			"--webhook-server-port", fmt.Sprint(ports[2]), "--leader-elect=false"}, nil
	}, func(ports []int) bool {
		return mountCerts(kubectl, kubeconfig, trainerNamespace, trainerSecret, trainerCertDir) &&
			httpOK(plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1]))
	})
	if err != nil {
		return err
	}
	runtimes := filepath.Join(filepath.Dir(filepath.Dir(t.kindBinary("trainer"))), "runtimes")
	return runLogged(dir, "trainer-crds", kubectl, "--kubeconfig", kubeconfig, "apply",
		"--server-side", "--force-conflicts", "-f", runtimes)
}

// Where Trainer v2.0.0's webhook server reads its certificate (the fixed
// path of pkg/util/cert, controller-runtime's default), a mount of
// trainerSecret in its pod. One machine has one such directory: two
// clusters running the Trainer at once would take each other's.
const trainerCertDir = "/tmp/k8s-webhook-server/serving-certs"

// mountCerts does what the kubelet does for the pod of a controller that
// manages its own certificates (the Trainer's, Kueue's): once its
// certificate rotator has written the Secret namespace/secret, the
// Secret's tls.crt and tls.key are written into certDir, where the rotator
// waits for them before it says the certificates are ready. True once
// they are there and match the Secret.
func mountCerts(kubectl, kubeconfig, namespace, secret, certDir string) bool {
	output, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", namespace, "get",
		"secret", secret, "-o", "json").Output()
	if err != nil {
		return false
	}
	var contents struct {
		Data map[string]string `json:"data"`
	}
	if json.Unmarshal(output, &contents) != nil {
		return false
	}
	if err := os.MkdirAll(certDir, 0o755); err != nil {
		return false
	}
	for _, name := range []string{"tls.crt", "tls.key"} {
		data, err := base64.StdEncoding.DecodeString(contents.Data[name])
		if err != nil || len(data) == 0 {
			return false
		}
		path := filepath.Join(certDir, name)
		if current, err := os.ReadFile(path); err == nil && bytes.Equal(current, data) {
			continue
		}
		if os.WriteFile(path+".tmp", data, 0o600) != nil || os.Rename(path+".tmp", path) != nil {
			return false
		}
	}
	return true
}

// writeWebhookHome writes what a controller's certificate rotator needs
// before its webhooks can be reached: the namespace, the empty Secret it
// fills, and the Service its certificate is made for, an ExternalName one
// naming 127.0.0.1 (the controller runs beside the API server, not in a
// pod).
func writeWebhookHome(b *strings.Builder, namespace, secret, service string) {
	fmt.Fprintf(b, `apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: Secret
metadata: {name: %[2]s, namespace: %[1]s}
---
apiVersion: v1
kind: Service
metadata: {name: %[3]s, namespace: %[1]s}
spec: {type: ExternalName, externalName: 127.0.0.1}
`, namespace, secret, service)
}

// trainerWebhookManifest: the namespace, the empty Secret, the Service and
// the webhooks of Trainer v2.0.0's manifests/base/webhook (rules as its
// release has them), by the Service on port.
func trainerWebhookManifest(port int) string {
	var b strings.Builder
	writeWebhookHome(&b, trainerNamespace, trainerSecret, trainerService)
	fmt.Fprintf(&b, `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: %s}
webhooks:
`, trainerWebhooks)
	for _, resource := range []string{"clustertrainingruntime", "trainingruntime", "trainjob"} {
		fmt.Fprintf(&b, `- name: validator.%[1]s.trainer.kubeflow.org
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: %[2]s, namespace: %[3]s, port: %[4]d, path: /validate-trainer-kubeflow-org-v1alpha1-%[1]s}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - apiGroups: [trainer.kubeflow.org]
    apiVersions: [v1alpha1]
    operations: [CREATE, UPDATE]
    resources: [%[1]ss]
`, resource, trainerService, trainerNamespace, port)
	}
	return b.String()
}

// startKubeRay: KubeRay's operator without its webhook (it registers one
// only when ENABLE_WEBHOOKS=true), so RayClusters are not validated on
// admission, only by the controller itself. A RayCluster made again under
// the name of one just deleted (a RayService's pending cluster) waits for
// its pods' stale scale expectations to time out (30 s) and is then looked
// at only on the periodic requeue, every 300 s by default: 15 s here, so
// that its pods come within a minute (seen 2026-12-07: the demo waited
// 240 s on such a cluster with no pod).
func startKubeRay(dir string, t tools) error {
	env := []string{"RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV=15"}
	return startController(dir, "kuberay", env, 2, func(ports []int) ([]string, error) {
		return []string{t.kindBinary("kuberay"), "--kubeconfig", filepath.Join(dir, "kubeconfig"),
			"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", ports[0]),
			"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[1]),
			"--enable-leader-election=false", "--log-stdout-encoder", "console"}, nil
	}, func(ports []int) bool {
		return httpOK(plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1]))
	})
}

// A controller-runtime controller whose webhooks the API server must call:
// served on 127.0.0.1 with a certificate of the cluster's CA, registered by
// URL instead of through a Service, its own certificate management (a
// Secret and a Service in the cluster) off.
type webhookController struct {
	kind      string // its --kinds name, and its configurations' prefix
	configAPI string // its Configuration file's apiVersion
	webhooks  []webhook
}

// One webhook of a controller's release, mutating and validating.
type webhook struct {
	name      string // "leaderworkerset.kb.io": m and v prefixed
	path      string // "leaderworkerset-x-k8s-io-v1-leaderworkerset": after mutate- or validate-
	group     string
	version   string
	resource  string
	mutate    []string // the operations the mutating webhook takes; none: no mutating one
	validate  []string // the operations the validating webhook takes; none: no validating one
	podsOfKey string   // for pod webhooks: only pods carrying this label
}

// lwsController: the LeaderWorkerSet controller. Its webhooks are not
// optional: its defaulting webhook fills in the rollout strategy, without
// which its reconciler panics (a nil rollingUpdateConfiguration; tried with
// ENABLE_WEBHOOKS=false on 2026-12-07: no pod was made), and its pod
// webhook gives a group's leader the group-index and group-key labels and
// each worker its worker-index and LWS_* variables.
var lwsController = webhookController{kind: "lws", configAPI: "config.lws.x-k8s.io/v1alpha1",
	webhooks: []webhook{
		{"leaderworkerset.kb.io", "leaderworkerset-x-k8s-io-v1-leaderworkerset", "leaderworkerset.x-k8s.io", "v1",
			"leaderworkersets", []string{"CREATE", "UPDATE"}, []string{"CREATE", "UPDATE"}, ""},
		{"pod.kb.io", "-v1-pod", "", "v1", "pods", []string{"CREATE", "UPDATE"}, []string{"CREATE", "UPDATE"},
			"leaderworkerset.sigs.k8s.io/name"},
	}}

// jobsetController: the JobSet controller (config/components/webhook of its
// release, with its patches). Its defaulting webhook fills in the success
// and failure policies and the network settings its reconciler reads; its
// validating one refuses an update that changes a replicated job's
// template but for what may change while it is suspended (labels,
// annotations, nodeSelector, tolerations, schedulingGates); its pod
// webhooks place a job's followers beside its leader for exclusive
// placement.
var jobsetController = webhookController{kind: "jobset", configAPI: "config.jobset.x-k8s.io/v1alpha1",
	webhooks: []webhook{
		{"jobset.kb.io", "jobset-x-k8s-io-v1alpha2-jobset", "jobset.x-k8s.io", "v1alpha2", "jobsets",
			[]string{"CREATE"}, []string{"CREATE", "UPDATE"}, ""},
		{"pod.kb.io", "-v1-pod", "", "v1", "pods", []string{"CREATE"}, []string{"CREATE"},
			"jobset.sigs.k8s.io/jobset-name"},
	}}

// startWebhookController starts c with its webhooks and registers them.
func startWebhookController(dir string, c webhookController, t tools) error {
	certDir := filepath.Join(dir, "pki", c.kind+"-webhook")
	if _, err := os.Stat(filepath.Join(certDir, "tls.crt")); err != nil {
		if err := generateWebhookCertificate(filepath.Join(dir, "pki"), certDir, c.kind+"-webhook"); err != nil {
			return fmt.Errorf("cannot make %s's webhook certificate: %v", c.kind, err)
		}
	}
	config := filepath.Join(dir, c.kind+".config.yaml")
	var webhookPort int
	err := startController(dir, c.kind, nil, 3, func(ports []int) ([]string, error) {
		webhookPort = ports[2]
		return []string{t.kindBinary(c.kind), "--kubeconfig", filepath.Join(dir, "kubeconfig"),
			"--config", config, "--leader-elect=false"}, os.WriteFile(config, []byte(c.configuration(ports, certDir)), 0o644)
	}, func(ports []int) bool {
		return httpOK(plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])) && tlsAnswers(ports[2])
	})
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt"))
	if err != nil {
		return err
	}
	webhooks := filepath.Join(dir, c.kind+".webhooks.yaml")
	if err := os.WriteFile(webhooks, []byte(c.webhookConfigurations(webhookPort, ca)), 0o644); err != nil {
		return err
	}
	return runLogged(dir, c.kind+"-crds", filepath.Join(t.k8sBin, "kubectl"), "--kubeconfig",
		filepath.Join(dir, "kubeconfig"), "apply", "--server-side", "--force-conflicts", "-f", webhooks)
}

// configuration: metrics, health and webhooks on ports[0], [1] and [2].
func (c webhookController) configuration(ports []int, certDir string) string {
	return fmt.Sprintf(`apiVersion: %s
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
metrics:
  bindAddress: 127.0.0.1:%d
health:
  healthProbeBindAddress: 127.0.0.1:%d
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
`, c.configAPI, ports[0], ports[1], ports[2], certDir)
}

// webhookConfigurations: the controller's webhook configurations as its
// release deploys them, each by URL on port instead of through a Service.
func (c webhookController) webhookConfigurations(port int, caPEM []byte) string {
	var b strings.Builder
	for _, kind := range []struct{ name, verb string }{{"Mutating", "mutate"}, {"Validating", "validate"}} {
		fmt.Fprintf(&b, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: %sWebhookConfiguration\n"+
			"metadata:\n  name: %s-%s-webhook-configuration\nwebhooks:\n", kind.name, c.kind, strings.ToLower(kind.name))
		for _, w := range c.webhooks {
			operations := w.mutate
			if kind.verb == "validate" {
				operations = w.validate
			}
			if len(operations) == 0 {
				continue
			}
			selector := ""
			if w.podsOfKey != "" {
				selector = fmt.Sprintf("\n  objectSelector:\n    matchExpressions:\n    - {key: %s, operator: Exists}", w.podsOfKey)
			}
			fmt.Fprintf(&b, `- name: %s%s
  admissionReviewVersions: [v1]
  clientConfig:
    url: https://127.0.0.1:%d/%s-%s
    caBundle: %s
  failurePolicy: Fail
  sideEffects: None%s
  rules:
  - apiGroups: ["%s"]
    apiVersions: [%s]
    operations: [%s]
    resources: [%s]
`, kind.verb[:1], w.name, port, kind.verb, w.path, base64.StdEncoding.EncodeToString(caPEM), selector,
				w.group, w.version, strings.Join(operations, ", "), w.resource)
		}
	}
	return b.String()
}

// generateWebhookCertificate: a serving certificate for 127.0.0.1 signed by
// the control plane's CA (in pki), as certDir/tls.crt and tls.key, the
// names controller-runtime's webhook server reads.
func generateWebhookCertificate(pki, certDir, commonName string) error {
	ca, err := loadAuthority(pki)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(certDir, 0o755); err != nil {
		return err
	}
	return issue(certDir, "tls", &x509.Certificate{Subject: pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}, ca)
}

// tlsAnswers: something answers HTTPS on port, whatever it answers.
func tlsAnswers(port int) bool {
	response, err := anyTLS.Get(fmt.Sprintf("https://127.0.0.1:%d/", port))
	if err != nil {
		return false
	}
	response.Body.Close()
	return true
}

// startKindsLater starts the kinds' controllers in a running simulated
// cluster that was started without them.
func startKindsLater(dir string, kinds []string, t tools) error {
	if _, err := os.Stat(filepath.Join(dir, "cluster.kinds")); err == nil {
		return fail("the kinds' controllers of %s are started already (restart-kinds starts them again)", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster.pools")); err != nil {
		return fail("%s is not a simulated cluster (start --cluster)", dir)
	}
	if _, ok := livePid(dir, "kube-apiserver"); !ok {
		return fail("the control plane in %s is not running", dir)
	}
	if err := t.requireBinaries(t.k8sBin, true, false, kinds); err != nil {
		return err
	}
	if err := startKinds(dir, kinds, t); err != nil {
		return err
	}
	logf("started %s", strings.Join(kinds, ", "))
	return nil
}

// restartKinds starts the kinds' controllers that start --kinds started
// again (their CRDs stay): one that crashed, or a test that wants a
// controller's restart.
func restartKinds(dir string, t tools) error {
	data, err := os.ReadFile(filepath.Join(dir, "cluster.kinds"))
	if err != nil {
		return fail("no kinds' controllers were started in %s (start --kinds)", dir)
	}
	if _, ok := livePid(dir, "kube-apiserver"); !ok {
		return fail("the control plane in %s is not running", dir)
	}
	kinds, err := parseKinds(strings.TrimSpace(string(data)))
	if err != nil {
		return err
	}
	if err := t.requireBinaries(t.k8sBin, true, false, kinds); err != nil {
		return err
	}
	for _, kind := range kinds {
		stopOne(dir, kind)
		if err := startKind(dir, kind, kinds, t); err != nil {
			return fail("%s did not start again; logs in %s/logs", kind, dir)
		}
	}
	logf("restarted %s", strings.Join(kinds, ", "))
	return nil
}
