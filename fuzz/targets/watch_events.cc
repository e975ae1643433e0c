// Watch events and list pages, through the real path: a Transport that
// answers with the fuzz input, the KubeClient and KubeListWatchClient
// decoding it, and an Informer keeping GpuWorkloads, Deployments and
// PlacementPolicies in its store as the operator does.
//
// Input: the lines of a streaming list and its watch, then a NUL byte,
// then a list page (without a NUL, the whole input is both). The first
// byte picks how the server answers the first stream: 200, 400 (no
// streaming lists: pages), 410 or 500.
#include <functional>

#include "app/cached_objects.h"
#include "core/kinds/target.h"
#include "fuzz_support.h"
#include "kube/client.h"
#include "kube/list_watch_client.h"
#include "runtime/informer.h"

namespace {

using namespace gpuplacement;

class LinesStream final : public kube::LineStream {
 public:
  explicit LinesStream(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  asio::awaitable<kube::TransportResult<std::optional<std::string>>> nextLine() override {
    if (closed_) {
      co_return kube::TransportError{"closed"};
    }
    if (next_ == lines_.size()) {
      co_return std::optional<std::string>();
    }
    co_return std::optional<std::string>(lines_[next_++]);
  }
  void close() override { closed_ = true; }

 private:
  std::vector<std::string> lines_;
  std::size_t next_ = 0;
  bool closed_ = false;
};

// Answers every request from the input; after a few, stops the informer.
class FuzzedServer final : public kube::Transport {
 public:
  FuzzedServer(std::vector<std::string> lines, std::string page, unsigned firstStreamStatus)
      : lines_(std::move(lines)), page_(std::move(page)), firstStatus_(firstStreamStatus) {}

  std::function<void()> stop;

  asio::awaitable<kube::TransportResult<kube::HttpResponse>> send(kube::HttpRequest) override {
    if (exhausted()) {
      co_return kube::TransportError{"done"};
    }
    co_return kube::HttpResponse{200, page_, std::nullopt};
  }

  asio::awaitable<kube::TransportResult<kube::StreamResponse>> openStream(
      kube::HttpRequest) override {
    if (exhausted()) {
      co_return kube::TransportError{"done"};
    }
    kube::StreamResponse response;
    response.status = streams_++ == 0 ? firstStatus_ : 200;
    if (response.status == 200) {
      response.stream = std::make_unique<LinesStream>(lines_);
    } else {
      response.errorBody = R"({"kind":"Status","code":)" + std::to_string(response.status) + "}";
    }
    co_return response;
  }

 private:
  bool exhausted() {
    if (++calls_ <= 6) {
      return false;
    }
    stop();
    return true;
  }

  std::vector<std::string> lines_;
  std::string page_;
  unsigned firstStatus_;
  int calls_ = 0;
  int streams_ = 0;
};

template <typename T>
void feed(const std::vector<std::string>& lines, const std::string& page, unsigned firstStatus,
          std::function<T(const nlohmann::json&)> project) {
  asio::io_context context;
  runtime::RealClock clock;
  auto transport = std::make_unique<FuzzedServer>(lines, page, firstStatus);
  auto* server = transport.get();
  kube::ClientOptions options;
  options.qps = 0;
  options.maxRetries = 0;
  kube::KubeClient client(std::move(transport), kube::makeCredentialSource({}, clock), options,
                          clock);
  kube::KubeListWatchClient listWatch(client);
  runtime::InformerOptions informerOptions;
  informerOptions.resource = "fuzzed";
  informerOptions.path = "/apis/example/v1/things";
  informerOptions.minWatchTimeout = std::chrono::seconds(1);
  informerOptions.backoff = {std::chrono::milliseconds(0), std::chrono::milliseconds(0)};
  runtime::Informer<T> informer(context.get_executor(), listWatch, informerOptions,
                                std::move(project), clock);
  server->stop = [&informer] { informer.stop(); };
  asio::co_spawn(context, informer.run(), asio::detached);
  context.run();
  informer.store().forEach([](const std::string&, const T& value) {
    if constexpr (requires { value.unpack(); }) {
      (void)value.unpack();
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  static constexpr unsigned kStatuses[] = {200, 400, 410, 500};
  const unsigned firstStatus = kStatuses[data[0] % 4];
  const std::string input = fuzz::text(data + 1, size - 1);
  const auto nul = input.find('\0');
  const std::string stream = input.substr(0, nul);
  const std::string page = nul == std::string::npos ? input : input.substr(nul + 1);
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= stream.size();) {
    const auto end = stream.find('\n', start);
    lines.push_back(stream.substr(start, end - start));
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  const auto& catalog = fuzz::catalog();
  feed<app::CachedWorkload>(lines, page, firstStatus, [&catalog](const nlohmann::json& object) {
    return app::packWorkload(object, catalog);
  });
  // Each kind of target read from the same stream, packed, and unpacked
  // back (the unpack must give what was packed).
  for (const auto kind : core::kTargetKinds) {
    feed<app::CachedTarget>(lines, page, firstStatus, [kind](const nlohmann::json& object) {
      const auto state = core::targetFromJson(kind, object);
      auto packed = app::packTarget(state);
      if (!(packed.unpack() == state)) {
        __builtin_trap();
      }
      return packed;
    });
  }
  feed<app::PolicyObject>(lines, page, firstStatus, [&catalog](const nlohmann::json& object) {
    return app::projectPolicy(object, catalog, fuzz::rules());
  });
  return 0;
}
