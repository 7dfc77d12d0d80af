#include "http_server.h"

#include <httplib.h>

#include <atomic>
#include <ctime>

#include "api_error.h"
#include "completion_endpoint.h"
#include "openai_json.h"
#include "scheduler.h"
#include "token_endpoints.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

void respondJson(httplib::Response& response, int status, const Json& body) {
  response.status = status;
  response.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace),
                       "application/json");
}

void respondError(httplib::Response& response, const ApiError& e) {
  respondJson(response, e.status(), e.toJson());
}

// The key guards the API and the tokenizer endpoints; /health stays open for monitors.
bool needsKey(const std::string& path) {
  return path.rfind("/v1/", 0) == 0 || path == "/tokenize" || path == "/detokenize";
}

}  // namespace

bool constantTimeEquals(std::string_view a, std::string_view b) {
  // Every byte of the longer string is visited whatever the contents.
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

struct OpenAiServer::Impl {
  Impl(Engine& e, ServerSettings s)
      : engine(e),
        settings(std::move(s)),
        scheduler(e, settings.slotCount, settings.queue),
        completions(e, settings, scheduler),
        started(std::time(nullptr)) {}

  void route();
  bool authorized(const httplib::Request& request) const;

  Engine& engine;
  const ServerSettings settings;
  Scheduler scheduler;  // declared before http: outlives every response stream
  CompletionEndpoint completions;
  const int64_t started;
  std::atomic<bool> stopRequested{false};
  httplib::Server http;
};

bool OpenAiServer::Impl::authorized(const httplib::Request& request) const {
  if (settings.apiKey.empty()) return true;
  const std::string header = request.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() < kBearer.size() || header.compare(0, kBearer.size(), kBearer) != 0)
    return false;
  return constantTimeEquals(std::string_view(header).substr(kBearer.size()), settings.apiKey);
}

void OpenAiServer::Impl::route() {
  // A thread per connection: enough for every admitted stream plus headroom, so a request
  // beyond the queue is answered 429 at once instead of waiting for a thread.
  const size_t threads = static_cast<size_t>(settings.slotCount + settings.queue) + 8;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(static_cast<size_t>(settings.maxBodyBytes));
  // An idle keep-alive connection holds its pool thread, and stop() waits for it: 2 s, not
  // httplib's 5, so that stopping (the app's settings switch, a model reload) stays quick.
  http.set_keep_alive_timeout(2);
  if (settings.cors) http.set_default_headers({{"Access-Control-Allow-Origin", "*"}});

  http.set_pre_routing_handler([this](const httplib::Request& request,
                                      httplib::Response& response) {
    if (request.method == "OPTIONS" || !needsKey(request.path) || authorized(request))
      return httplib::Server::HandlerResponse::Unhandled;
    response.set_header("WWW-Authenticate", "Bearer");
    respondError(response,
                 ApiError(401, "missing or wrong API key (send 'Authorization: Bearer KEY')", "",
                          "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own errors (no route, body too large, malformed HTTP) in the OpenAI shape. It
  // calls this for every status >= 400, so responses that already have a body are left alone.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& request, httplib::Response& response) {
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        if (response.status == 404)
          respondError(response,
                       ApiError(404, "no route for " + request.method + " " + request.path, "",
                                "unknown_url"));
        else if (response.status == 413)
          respondError(response, ApiError(413,
                                          "the request body is larger than the server's limit of " +
                                              std::to_string(settings.maxBodyBytes) + " bytes",
                                          "", "request_too_large"));
        else
          respondError(response,
                       ApiError(response.status,
                                "bad HTTP request (status " + std::to_string(response.status) + ")",
                                "", "bad_request"));
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
        std::string message = "internal error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          message = e.what();
        } catch (...) {
        }
        respondError(response, ApiError(500, message, "", "internal_error"));
      });

  if (settings.cors)
    http.Options(R"(/v1/.*|/tokenize|/detokenize)", [](const httplib::Request&,
                                                       httplib::Response& response) {
      response.status = 204;
      response.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      response.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      response.set_header("Access-Control-Max-Age", "600");
    });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& response) {
    const Scheduler::Load load = scheduler.load();
    respondJson(response, 200,
                {{"status", "ok"},
                 {"model", settings.modelId},
                 {"slots", load.slotCount},
                 {"active", load.active},
                 {"queued", load.queued},
                 {"queue_capacity", load.queueCapacity}});
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& response) {
    respondJson(response, 200, modelsJson(settings.modelId, started));
  });
  http.Get(
      R"(/v1/models/(.+))", [this](const httplib::Request& request, httplib::Response& response) {
        if (request.matches[1] != settings.modelId) {
          respondError(
              response,
              ApiError(404, "The model '" + std::string(request.matches[1]) + "' does not exist",
                       "model", "model_not_found"));
          return;
        }
        respondJson(response, 200, modelsJson(settings.modelId, started)["data"][0]);
      });
  http.Post("/v1/chat/completions",
            [this](const httplib::Request& request, httplib::Response& response) {
              completions.handle(request, response, /*chat=*/true);
            });
  http.Post("/v1/completions",
            [this](const httplib::Request& request, httplib::Response& response) {
              completions.handle(request, response, /*chat=*/false);
            });
  auto tokens = [this](auto answer) {
    return [this, answer](const httplib::Request& request, httplib::Response& response) {
      try {
        respondJson(response, 200, answer(parseJsonBody(request.body)));
      } catch (const ApiError& e) {
        respondError(response, e);
      }
    };
  };
  http.Post("/tokenize",
            tokens([this](const Json& body) { return tokenizeJson(engine, settings, body); }));
  http.Post("/detokenize",
            tokens([this](const Json& body) { return detokenizeJson(engine, body); }));
}

OpenAiServer::OpenAiServer(Engine& engine, ServerSettings settings)
    : impl_(std::make_unique<Impl>(engine, std::move(settings))) {
  impl_->route();
}

OpenAiServer::~OpenAiServer() { stop(); }

int OpenAiServer::bind() {
  const ServerSettings& s = impl_->settings;
  const int port = s.port == 0 ? impl_->http.bind_to_any_port(s.host)
                               : (impl_->http.bind_to_port(s.host, s.port) ? s.port : -1);
  if (port < 0)
    throw Error("cannot listen on " + s.host + ":" + std::to_string(s.port) +
                " (address in use, or not an address of this machine)");
  return port;
}

bool OpenAiServer::run() {
  if (impl_->stopRequested.load()) return true;
  return impl_->http.listen_after_bind() || impl_->stopRequested.load();
}

void OpenAiServer::stop() {
  impl_->stopRequested.store(true);
  impl_->scheduler.stop();  // streams end first, so the HTTP threads can be joined
  impl_->http.stop();
}

}  // namespace strata::server
