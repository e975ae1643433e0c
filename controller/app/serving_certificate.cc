#include "app/serving_certificate.h"

#include <fstream>
#include <regex>
#include <sstream>

#include <boost/asio/ssl.hpp>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>

namespace gpuplacement::app {
namespace {

constexpr std::chrono::seconds kRecheckEvery{10};

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct ExtensionFree {
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
struct BignumFree {
  void operator()(BIGNUM* p) const { BN_free(p); }
};

std::string openSslError(const std::string& what) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) {
    return what;
  }
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return what + ": " + text;
}

// A server context that accepts TLS 1.2 and newer only.
std::shared_ptr<asio::ssl::context> serverContext() {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::single_dh_use);
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  return context;
}

bool addExtension(X509* certificate, int nid, const std::string& value) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, ExtensionFree> extension(
      X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str()));
  return extension && X509_add_ext(certificate, extension.get(), -1) == 1;
}

std::string readWhole(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = in.good();
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A context from PEM text; the error names the file at fault.
base::Result<std::shared_ptr<asio::ssl::context>> contextFromPem(const std::string& directory,
                                                                 const std::string& certificate,
                                                                 const std::string& key) {
  auto context = serverContext();
  boost::system::error_code ec;
  context->use_certificate_chain(asio::buffer(certificate), ec);
  if (ec) {
    return base::Error{directory + "/tls.crt", "not a PEM certificate: " + ec.message()};
  }
  context->use_private_key(asio::buffer(key), asio::ssl::context::pem, ec);
  if (ec) {
    return base::Error{directory + "/tls.key", "not a PEM private key: " + ec.message()};
  }
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return base::Error{directory + "/tls.key",
                       openSslError("does not match the certificate in tls.crt")};
  }
  return context;
}

}  // namespace

base::Result<std::unique_ptr<ServingCertificate>> ServingCertificate::selfSigned(
    const std::string& hostname) {
  std::unique_ptr<EVP_PKEY, PkeyFree> key(EVP_EC_gen("P-256"));
  std::unique_ptr<X509, X509Free> certificate(X509_new());
  std::unique_ptr<BIGNUM, BignumFree> serial(BN_new());
  if (!key || !certificate || !serial) {
    return base::Error{"metrics certificate", openSslError("cannot make a key")};
  }
  bool ok = X509_set_version(certificate.get(), 2) == 1 &&  // v3
            BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 &&
            BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate.get())) &&
            // An hour back, for nodes whose clocks disagree a little.
            X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -3600) &&
            X509_gmtime_adj(X509_getm_notAfter(certificate.get()), 365L * 24 * 3600) &&
            X509_set_pubkey(certificate.get(), key.get()) == 1;
  X509_NAME* name = X509_get_subject_name(certificate.get());
  ok = ok &&
       X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                  reinterpret_cast<const unsigned char*>("gpu-placement-operator"),
                                  -1, -1, 0) == 1 &&
       X509_set_issuer_name(certificate.get(), name) == 1;
  std::string names = "DNS:localhost,IP:127.0.0.1,IP:::1";
  static const std::regex kDnsName("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
  if (std::regex_match(hostname, kDnsName) && hostname != "localhost") {
    names += ",DNS:" + hostname;
  }
  ok = ok && addExtension(certificate.get(), NID_basic_constraints, "critical,CA:FALSE") &&
       addExtension(certificate.get(), NID_key_usage, "critical,digitalSignature") &&
       addExtension(certificate.get(), NID_ext_key_usage, "serverAuth") &&
       addExtension(certificate.get(), NID_subject_alt_name, names) &&
       X509_sign(certificate.get(), key.get(), EVP_sha256()) > 0;
  if (!ok) {
    return base::Error{"metrics certificate", openSslError("cannot make a certificate")};
  }
  auto context = serverContext();
  if (SSL_CTX_use_certificate(context->native_handle(), certificate.get()) != 1 ||
      SSL_CTX_use_PrivateKey(context->native_handle(), key.get()) != 1) {
    return base::Error{"metrics certificate", openSslError("cannot use the certificate")};
  }
  return std::unique_ptr<ServingCertificate>(
      new ServingCertificate(std::move(context), "self-signed"));
}

base::Result<std::unique_ptr<ServingCertificate>> ServingCertificate::fromDirectory(
    const std::string& directory, const runtime::Clock& clock,
    std::function<void(const std::string&)> log) {
  bool certificateRead = false;
  bool keyRead = false;
  const std::string certificate = readWhole(directory + "/tls.crt", certificateRead);
  const std::string key = readWhole(directory + "/tls.key", keyRead);
  if (!certificateRead || !keyRead) {
    return base::Error{"--metrics-cert-dir", "cannot read " + directory + "/" +
                                                 (certificateRead ? "tls.key" : "tls.crt")};
  }
  auto context = contextFromPem(directory, certificate, key);
  if (!context) {
    return base::Error{"--metrics-cert-dir", context.error().describe()};
  }
  std::unique_ptr<ServingCertificate> served(
      new ServingCertificate(std::move(context).value(), directory + "/tls.crt"));
  served->directory_ = directory;
  served->clock_ = &clock;
  served->log_ = std::move(log);
  served->loadedPem_ = certificate + key;
  served->nextCheck_ = clock.monotonicNow() + kRecheckEvery;
  return served;
}

std::shared_ptr<asio::ssl::context> ServingCertificate::current() {
  if (!directory_.empty() && clock_->monotonicNow() >= nextCheck_) {
    nextCheck_ = clock_->monotonicNow() + kRecheckEvery;
    reloadIfChanged();
  }
  return context_;
}

void ServingCertificate::reloadIfChanged() {
  bool certificateRead = false;
  bool keyRead = false;
  const std::string certificate = readWhole(directory_ + "/tls.crt", certificateRead);
  const std::string key = readWhole(directory_ + "/tls.key", keyRead);
  if (!certificateRead || !keyRead || certificate + key == loadedPem_ ||
      certificate + key == rejectedPem_) {
    return;  // unchanged, caught between two files, or already said unusable
  }
  auto context = contextFromPem(directory_, certificate, key);
  if (!context) {
    rejectedPem_ = certificate + key;
    if (log_) {
      log_("the renewed metrics certificate cannot be used, keeping the one in force: " +
           context.error().describe());
    }
    return;
  }
  context_ = std::move(context).value();
  loadedPem_ = certificate + key;
  if (log_) {
    log_("serving the renewed metrics certificate from " + source_);
  }
}

}  // namespace gpuplacement::app
