#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "base/result.h"
#include "runtime/asio.h"
#include "runtime/clock.h"

namespace gpuplacement::app {

// The metrics server's TLS identity. Without a certificate directory it is
// self-signed and made in memory at start, as controller-runtime's metrics
// server does (scrapers then skip verification); with one, tls.crt and
// tls.key are read from it (a mounted Secret, e.g. cert-manager's) and read
// again when they change, so a renewed certificate is served without a
// restart.
class ServingCertificate {
 public:
  // A P-256 key and a certificate for a year, naming localhost, 127.0.0.1,
  // ::1 and `hostname` (the pod's name) when it is a DNS name.
  static base::Result<std::unique_ptr<ServingCertificate>> selfSigned(const std::string& hostname);
  // `log` hears of a renewal read, or of one that could not be used (the
  // certificate in force stays).
  static base::Result<std::unique_ptr<ServingCertificate>> fromDirectory(
      const std::string& directory, const runtime::Clock& clock,
      std::function<void(const std::string&)> log = {});

  // The context for a new connection; with a directory, the files are
  // checked for a change at most every 10 s.
  std::shared_ptr<asio::ssl::context> current();
  // "self-signed" or "DIR/tls.crt", for the log.
  const std::string& source() const { return source_; }

 private:
  ServingCertificate(std::shared_ptr<asio::ssl::context> context, std::string source)
      : context_(std::move(context)), source_(std::move(source)) {}
  void reloadIfChanged();

  std::shared_ptr<asio::ssl::context> context_;
  std::string source_;
  // Set only with a directory.
  std::string directory_;
  const runtime::Clock* clock_ = nullptr;
  std::function<void(const std::string&)> log_;
  std::string loadedPem_;    // tls.crt and tls.key as loaded, to notice a change
  std::string rejectedPem_;  // the last pair found unusable, reported once
  runtime::MonotonicTime nextCheck_{};
};

}  // namespace gpuplacement::app
