package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

const certificateLifetime = 3650 * 24 * time.Hour

// The names the API server answers to, in and out of the cluster.
var apiServerNames = []string{"localhost", "kubernetes", "kubernetes.default",
	"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}

type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// generatePKI writes a new CA, the API server's serving certificate, the
// admin's client certificate (system:masters) and the service-account
// signing key pair into dir: ca, apiserver, admin (.crt, .key), sa.key,
// sa.pub. Keys are P-256, the service-account key RSA 2048, as kubeadm's.
func generatePKI(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	template := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "gpu-placement-test-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	ca, err := sign(template, key, nil)
	if err != nil {
		return err
	}
	if err := writeCertificate(dir, "ca", ca.cert, key); err != nil {
		return err
	}
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		DNSNames:    apiServerNames,
	}
	if err := issue(dir, "apiserver", server, ca); err != nil {
		return err
	}
	if err := issueClient(dir, "admin", pkix.Name{CommonName: "admin",
		Organization: []string{"system:masters"}}, ca); err != nil {
		return err
	}
	serviceAccounts, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	public, err := x509.MarshalPKIXPublicKey(&serviceAccounts.PublicKey)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), serviceAccounts); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", public, 0o644)
}

// generateClusterPKI: client certificates for the simulated cluster's
// components, named as kubeadm names them, so the API server's bootstrap
// RBAC (the system:kube-scheduler and system:kube-controller-manager
// bindings) applies.
func generateClusterPKI(dir string) error {
	ca, err := loadAuthority(dir)
	if err != nil {
		return err
	}
	for _, name := range []string{"kube-scheduler", "kube-controller-manager"} {
		if err := issueClient(dir, name, pkix.Name{CommonName: "system:" + name}, ca); err != nil {
			return err
		}
	}
	return nil
}

func issueClient(dir, name string, subject pkix.Name, ca authority) error {
	return issue(dir, name, &x509.Certificate{Subject: subject,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca)
}

// issue: a new P-256 key and a certificate for it signed by ca, written as
// dir/name.crt and dir/name.key.
func issue(dir, name string, template *x509.Certificate, ca authority) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	template.BasicConstraintsValid = true
	template.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	issued, err := sign(template, key, &ca)
	if err != nil {
		return err
	}
	return writeCertificate(dir, name, issued.cert, key)
}

// sign: template signed by ca, or by key itself when ca is nil.
func sign(template *x509.Certificate, key crypto.Signer, ca *authority) (authority, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return authority{}, err
	}
	template.SerialNumber = serial
	// An hour back: a clock a little behind still accepts it.
	template.NotBefore = time.Now().Add(-time.Hour)
	template.NotAfter = template.NotBefore.Add(certificateLifetime)
	parent, signer := template, key
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, key.Public(), signer)
	if err != nil {
		return authority{}, err
	}
	cert, err := x509.ParseCertificate(der)
	return authority{cert, key}, err
}

func loadAuthority(dir string) (authority, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return authority{}, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		return authority{}, err
	}
	certBlock, _ := pem.Decode(certPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if certBlock == nil || keyBlock == nil {
		return authority{}, fmt.Errorf("%s: ca.crt or ca.key is not PEM", dir)
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return authority{}, err
	}
	key, err := x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	if err != nil {
		return authority{}, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return authority{}, fmt.Errorf("%s/ca.key cannot sign", dir)
	}
	return authority{cert, signer}, nil
}

func writeCertificate(dir, name string, cert *x509.Certificate, key crypto.Signer) error {
	if err := writeKey(filepath.Join(dir, name+".key"), key); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", cert.Raw, 0o644)
}

// writeKey: PKCS #8, as openssl genpkey writes it; readable by the owner only.
func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}

// writeKubeconfig: a kubeconfig for the API server on port that
// authenticates with the client certificate user (admin, kube-scheduler...),
// its certificates inline.
func writeKubeconfig(pki string, port int, user, path string) error {
	read := func(name string) (string, error) {
		data, err := os.ReadFile(filepath.Join(pki, name))
		return base64.StdEncoding.EncodeToString(data), err
	}
	ca, err := read("ca.crt")
	if err != nil {
		return err
	}
	cert, err := read(user + ".crt")
	if err != nil {
		return err
	}
	key, err := read(user + ".key")
	if err != nil {
		return err
	}
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority-data: %s
users:
- name: admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: local
  context:
    cluster: local
    user: admin
    namespace: default
current-context: local
`, port, ca, cert, key)
	return os.WriteFile(path, []byte(text), 0o600)
}
