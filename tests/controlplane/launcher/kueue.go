package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The names Kueue gives its webhook's pieces: the defaults of its
// configuration (apis/config/v1beta2/defaults.go), which its certificate
// rotator (pkg/util/cert) makes the certificate for
// (kueueService.kueueNamespace.svc), keeps in kueueSecret and injects into
// the two webhook configurations named after the Service and into the
// conversion webhooks of kueueConversionCRDs.
const (
	kueueNamespace = "kueue-system"
	kueueService   = "kueue-webhook-service"
	kueueSecret    = "kueue-webhook-server-cert"
)

// The CRDs Kueue serves in two versions (v1beta1 and v1beta2, stored as
// v1beta2) and converts by its webhook; its rotator injects its CA into
// each and is not ready until it has, so each names the webhook
// (config/components/crd/patches/webhook_in_*.yaml of its release).
var kueueConversionCRDs = []string{"localqueues", "clusterqueues", "workloads", "cohorts", "multikueueclusters"}

// kueueFrameworks: the integrations Kueue's configuration enables with
// kinds: batch/job always, and each of the other kinds' that runs beside
// it, whose CRDs are installed before Kueue starts (for an enabled
// integration whose CRD is missing, Kueue registers the webhook and waits
// for the API before it sets up the controller: jobframework/setup.go).
// Not the pod integration (Kueue would queue every pod with a queue-name
// label), though Kueue turns it on for LeaderWorkerSet's pods itself.
func kueueFrameworks(kinds []string) []string {
	frameworks := []string{"batch/job"}
	for _, kind := range kinds {
		switch kind {
		case "kuberay":
			frameworks = append(frameworks, "ray.io/rayjob", "ray.io/raycluster")
		case "jobset":
			frameworks = append(frameworks, "jobset.x-k8s.io/jobset")
		case "lws":
			frameworks = append(frameworks, "leaderworkerset.x-k8s.io/leaderworkerset")
		case "trainer":
			frameworks = append(frameworks, "trainer.kubeflow.org/trainjob")
		}
	}
	return frameworks
}

// kueueWebhooks: Kueue's own webhooks (its API's defaulting and
// validation) and those of the integrations kueueFrameworks enables, as
// its release's config/components/webhook registers them. The Job's
// mutating webhook is the one that matters most: it suspends a Job with a
// queue-name label when it is created, so that it waits for admission.
func kueueWebhooks(kinds []string) []webhook {
	create, createUpdate := []string{"CREATE"}, []string{"CREATE", "UPDATE"}
	hooks := []webhook{
		{"clusterqueue.kb.io", "kueue-x-k8s-io-v1beta2-clusterqueue", "kueue.x-k8s.io", "v1beta2", "clusterqueues",
			create, createUpdate, ""},
		{"cohort.kb.io", "kueue-x-k8s-io-v1beta2-cohort", "kueue.x-k8s.io", "v1beta2", "cohorts", nil, createUpdate, ""},
		{"resourceflavor.kb.io", "kueue-x-k8s-io-v1beta2-resourceflavor", "kueue.x-k8s.io", "v1beta2", "resourceflavors",
			create, createUpdate, ""},
		{"workload.kb.io", "kueue-x-k8s-io-v1beta2-workload", "kueue.x-k8s.io", "v1beta2", "workloads, workloads/status",
			create, createUpdate, ""},
		{"job.kb.io", "batch-v1-job", "batch", "v1", "jobs", create, createUpdate, ""},
	}
	for _, kind := range kinds {
		switch kind {
		case "kuberay":
			hooks = append(hooks,
				webhook{"rayjob.kb.io", "ray-io-v1-rayjob", "ray.io", "v1", "rayjobs", create, createUpdate, ""},
				webhook{"raycluster.kb.io", "ray-io-v1-raycluster", "ray.io", "v1", "rayclusters", create, createUpdate, ""})
		case "jobset":
			hooks = append(hooks, webhook{"jobset.kb.io", "jobset-x-k8s-io-v1alpha2-jobset", "jobset.x-k8s.io",
				"v1alpha2", "jobsets", create, createUpdate, ""})
		case "lws":
			// Kueue queues a LeaderWorkerSet's pods as pod groups: its pod
			// webhooks too.
			hooks = append(hooks,
				webhook{"leaderworkerset.kb.io", "leaderworkerset-x-k8s-io-v1-leaderworkerset",
					"leaderworkerset.x-k8s.io", "v1", "leaderworkersets", createUpdate, createUpdate, ""},
				webhook{"pod.kb.io", "-v1-pod", "", "v1", "pods", create, createUpdate, ""})
		case "trainer":
			hooks = append(hooks, webhook{"trainjob.kb.io", "trainer-kubeflow-org-v1alpha1-trainjob",
				"trainer.kubeflow.org", "v1alpha1", "trainjobs", create, createUpdate, ""})
		}
	}
	return hooks
}

// kueueConfiguration: metrics, health and webhooks on ports[0], [1] and
// [2]; leader election off; its own certificate management on (see
// startKueue), its certificates in certDir; the visibility server (an
// aggregated API server of its own, on a fixed port) off.
func kueueConfiguration(ports []int, certDir string, kinds []string) string {
	return fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: true
  webhookServiceName: %s
  webhookSecretName: %s
metrics:
  bindAddress: 127.0.0.1:%d
health:
  healthProbeBindAddress: 127.0.0.1:%d
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
manageJobsWithoutQueueName: false
featureGates:
  VisibilityOnDemand: false
integrations:
  frameworks: [%s]
`, kueueNamespace, kueueService, kueueSecret, ports[0], ports[1], ports[2], certDir,
		strings.Join(kueueFrameworks(kinds), ", "))
}

// kueueWebhookManifest: the namespace of Kueue's configuration, the empty
// Secret its rotator fills, the Service its certificate is made for (an
// ExternalName one naming 127.0.0.1, as for the Trainer) and its webhook
// configurations, each webhook by that Service on port, those of the
// integrations not for kube-system and kueueNamespace (as its release).
func kueueWebhookManifest(port int, kinds []string) string {
	var b strings.Builder
	writeWebhookHome(&b, kueueNamespace, kueueSecret, kueueService)
	hooks := kueueWebhooks(kinds)
	base := strings.TrimSuffix(kueueService, "-webhook-service")
	for _, kind := range []struct{ name, verb string }{{"Mutating", "mutate"}, {"Validating", "validate"}} {
		fmt.Fprintf(&b, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: %sWebhookConfiguration\n"+
			"metadata:\n  name: %s-%s-webhook-configuration\nwebhooks:\n", kind.name, base, strings.ToLower(kind.name))
		for _, w := range hooks {
			operations := w.mutate
			if kind.verb == "validate" {
				operations = w.validate
			}
			if len(operations) == 0 {
				continue
			}
			selector := ""
			if w.group != "kueue.x-k8s.io" {
				selector = fmt.Sprintf("\n  namespaceSelector:\n    matchExpressions:\n"+
					"    - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, %s]}", kueueNamespace)
			}
			fmt.Fprintf(&b, `- name: %s%s
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: %s, namespace: %s, port: %d, path: /%s-%s}
  failurePolicy: Fail
  sideEffects: None%s
  rules:
  - apiGroups: ["%s"]
    apiVersions: [%s]
    operations: [%s]
    resources: [%s]
`, kind.verb[:1], w.name, kueueService, kueueNamespace, port, kind.verb, w.path, selector,
				w.group, w.version, strings.Join(operations, ", "), w.resource)
		}
	}
	return b.String()
}

// kueueConversionPatch: the merge patch that has a CRD of
// kueueConversionCRDs convert through Kueue's webhook on port.
func kueueConversionPatch(port int) string {
	return fmt.Sprintf(`{"spec":{"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],`+
		`"clientConfig":{"service":{"name":"%s","namespace":"%s","path":"/convert","port":%d}}}}}}`,
		kueueService, kueueNamespace, port)
}

// startKueue: Kueue's controller manager, with the integrations of the
// kinds started beside it. Its webhooks are needed: the Job's suspends a
// queued Job when it is created. Without its own certificate management
// it reads the metrics server's certificate from a fixed path,
// /etc/kueue/metrics/certs (cmd/kueue/main.go), and exits when there is
// none; with it, the metrics server makes its own and the webhook's comes
// from its rotator, as in the Trainer's case (startTrainer): a CA and a
// certificate for kueueService.kueueNamespace.svc kept in kueueSecret,
// read from the configuration's certDir (here DIR/pki/kueue-webhook, which
// mountCerts fills from the Secret), the CA injected into the webhook
// configurations and the conversion webhooks; it is ready once it has. So
// the API server reaches it through that Service, an ExternalName one
// naming 127.0.0.1, on the webhook's port. Nothing is written outside DIR.
func startKueue(dir string, kinds []string, t tools) error {
	kubectl := filepath.Join(t.k8sBin, "kubectl")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	certDir := filepath.Join(dir, "pki", "kueue-webhook")
	config := filepath.Join(dir, "kueue.config.yaml")
	return startController(dir, "kueue", nil, 3, func(ports []int) ([]string, error) {
		manifest := filepath.Join(dir, "kueue.webhooks.yaml")
		if err := os.WriteFile(manifest, []byte(kueueWebhookManifest(ports[2], kinds)), 0o644); err != nil {
			return nil, err
		}
		if err := runLogged(dir, "kueue-crds", kubectl, "--kubeconfig", kubeconfig, "apply",
			"--server-side", "--force-conflicts", "-f", manifest); err != nil {
			return nil, err
		}
		for _, crd := range kueueConversionCRDs {
			if err := runLogged(dir, "kueue-crds", kubectl, "--kubeconfig", kubeconfig, "patch", "crd",
				crd+".kueue.x-k8s.io", "--type", "merge", "-p", kueueConversionPatch(ports[2])); err != nil {
				return nil, err
			}
		}
		return []string{t.kindBinary("kueue"), "--kubeconfig", kubeconfig, "--config", config},
			os.WriteFile(config, []byte(kueueConfiguration(ports, certDir, kinds)), 0o644)
	}, func(ports []int) bool {
		return mountCerts(kubectl, kubeconfig, kueueNamespace, kueueSecret, certDir) &&
			httpOK(plainHTTP, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])) && tlsAnswers(ports[2])
	})
}
