#pragma once

#include <memory>

#include "base/result.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"

namespace gpuplacement::kube {

// Builds the client for a resolved configuration: Beast transport with the
// configuration's TLS settings, and its credential source.
base::Result<std::unique_ptr<KubeClient>> connect(asio::any_io_executor executor,
                                                  const ClientConfig& config, ClientOptions options,
                                                  const runtime::Clock& clock);

}  // namespace gpuplacement::kube
