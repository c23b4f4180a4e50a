// SPDX-License-Identifier: Apache-2.0
// The HTTP server on a real loopback socket, driven by a raw POSIX-socket client so that the
// bytes on the wire (half requests, garbage, huge headers) are exactly what the test says.
// Timeouts here are safety nets only (SO_RCVTIMEO of 60 s); nothing asserts on durations.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "server/http/errors.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/http/server.h"

namespace perfwarden::http {
namespace {

using namespace std::chrono_literals;

constexpr auto kSafetyNet = 60s;

struct RawResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// One TCP connection with a read buffer; every call fails the test rather than hang forever.
class Client {
 public:
  explicit Client(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{std::chrono::duration_cast<std::chrono::seconds>(kSafetyNet).count(), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    connect_errno_ = errno;
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  int connect_errno() const { return connect_errno_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads one response (Content-Length framed, as the server always frames them).
  std::optional<RawResponse> Read() {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    RawResponse response;
    std::string head = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    size_t line_end = head.find("\r\n");
    std::string status_line = head.substr(0, line_end);
    if (status_line.rfind("HTTP/1.1 ", 0) != 0) return std::nullopt;
    response.status = std::stoi(status_line.substr(9, 3));
    while (line_end != std::string::npos) {
      size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      std::string line =
          head.substr(start, line_end == std::string::npos ? line_end : line_end - start);
      size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      response.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    }
    if (response.status == 100) return response;
    size_t length = std::stoul(response.headers.at("content-length"));
    while (buffer_.size() < length) {
      if (!Fill()) return std::nullopt;
    }
    response.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return response;
  }

  // True when the server closed the connection (EOF or reset) with nothing more to read.
  bool ReadsClosed() {
    buffer_.clear();
    while (true) {
      char chunk[4096];
      ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;  // EAGAIN: the safety net expired
      extra_bytes_ += static_cast<size_t>(n);
    }
  }
  size_t extra_bytes() const { return extra_bytes_; }

 private:
  bool Fill() {
    char chunk[4096];
    ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  int connect_errno_ = 0;
  std::string buffer_;
  size_t extra_bytes_ = 0;
};

struct State {
  std::atomic<int> echo_calls{0};
  std::promise<void> slow_entered;
  std::promise<void> slow_release;
  std::atomic<int> heavy_calls{0};
  std::promise<void> heavy_entered;
  std::shared_future<void> heavy_release;
};

Router MakeRouter(State& state) {
  Router router;
  router.Add("GET", "/hello", "hello", [](const Request& request, const PathParams&) {
    return Response::Json(200, nlohmann::json{{"remote", request.remote_address}}.dump());
  });
  router.Add("POST", "/echo", "echo", [&state](const Request& request, const PathParams&) {
    ++state.echo_calls;
    return Response::Text(200, request.body);
  });
  router.Add("GET", "/slow", "slow", [&state](const Request&, const PathParams&) {
    state.slow_entered.set_value();
    state.slow_release.get_future().wait();
    return Response::Json(200, R"({"slow":true})");
  });
  router.Add(
      "GET", "/heavy", "heavy",
      [&state](const Request&, const PathParams&) {
        if (state.heavy_calls++ == 0) state.heavy_entered.set_value();
        state.heavy_release.wait();
        return Response::Json(200, R"({"heavy":true})");
      },
      Router::Cost::kHeavy);
  return router;
}

std::string Get(std::string_view path, std::string_view extra = "") {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: test\r\n" + std::string(extra) + "\r\n";
}

std::string Post(std::string_view path, std::string_view body, std::string_view extra = "") {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: test\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         std::string(extra) + "\r\n" + std::string(body);
}

std::string ErrorCodeOf(const RawResponse& response) {
  return nlohmann::json::parse(response.body).at("error").at("code");
}

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<Server>(options, MakeRouter(state_), &metrics_);
    auto started = server_->Start();
    ASSERT_TRUE(started.has_value()) << started.error().ToString();
    ASSERT_NE(server_->port(), 0);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  State state_;
  Metrics metrics_;
  std::unique_ptr<Server> server_;
};

TEST_F(HttpServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  StartServer({});
  Client client(server_->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(Get("/hello")));
  auto first = client.Read();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->headers["content-type"], "application/json");
  ASSERT_TRUE(client.Send(Post("/echo", "ping")));
  auto second = client.Read();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 200);
  EXPECT_EQ(second->body, "ping");
  EXPECT_EQ(second->headers["content-type"], "text/plain; charset=utf-8");
  EXPECT_EQ(nlohmann::json::parse(first->body)["remote"].get<std::string>().rfind("127.0.0.1:", 0),
            0u);

  // Pipelined: both requests in one write, both answered in order.
  ASSERT_TRUE(client.Send(Post("/echo", "a") + Post("/echo", "b")));
  auto a = client.Read();
  auto b = client.Read();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->body, "a");
  EXPECT_EQ(b->body, "b");

  // A request asking to close gets its answer and then the close.
  ASSERT_TRUE(client.Send(Get("/hello", "Connection: close\r\n")));
  auto last = client.Read();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->headers["connection"], "close");
  EXPECT_TRUE(client.ReadsClosed());
}

TEST_F(HttpServerTest, RoutingErrorsAreJsonAndMetricsCountThem) {
  StartServer({});
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/nope") + Get("/echo") + Get("/hello")));
  auto not_found = client.Read();
  auto not_allowed = client.Read();
  auto ok = client.Read();
  ASSERT_TRUE(not_found && not_allowed && ok);
  EXPECT_EQ(not_found->status, 404);
  EXPECT_EQ(ErrorCodeOf(*not_found), "NOT_FOUND");
  EXPECT_EQ(not_allowed->status, 405);
  EXPECT_EQ(not_allowed->headers["allow"], "POST");
  std::string text = metrics_.Render();
  EXPECT_NE(text.find(R"(perfwarden_http_requests_total{route="hello",status="200"} 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(perfwarden_http_requests_total{route="unmatched",status="404"} 1)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(perfwarden_http_requests_total{route="echo",status="405"} 1)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(perfwarden_http_request_duration_seconds_count{route="hello"} 1)"),
            std::string::npos);
}

TEST_F(HttpServerTest, ExpectContinueGetsInterimResponse) {
  StartServer({});
  Client client(server_->port());
  ASSERT_TRUE(client.Send(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  auto interim = client.Read();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(client.Send("hello"));
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "hello");
}

TEST_F(HttpServerTest, OversizedBodyIs413AndNeverReachesTheHandler) {
  ServerOptions options;
  options.body_limit = 1024;
  StartServer(options);
  {
    // The whole body is sent: the server must answer 413 and not reset the connection.
    Client client(server_->port());
    ASSERT_TRUE(client.Send(Post("/echo", std::string(64 * 1024, 'x'))));
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 413);
    EXPECT_EQ(response->headers["content-type"], "application/json");
    EXPECT_EQ(response->headers["connection"], "close");
    EXPECT_EQ(ErrorCodeOf(*response), "PAYLOAD_TOO_LARGE");
    EXPECT_TRUE(client.ReadsClosed());
  }
  {
    // Declared size alone is enough: answered before the body is sent.
    Client client(server_->port());
    ASSERT_TRUE(
        client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000000\r\n\r\n"));
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 413);
  }
  {
    // Chunked bodies are counted as they arrive.
    Client client(server_->port());
    std::string chunk(800, 'y');
    ASSERT_TRUE(
        client.Send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                    "320\r\n" +
                    chunk + "\r\n320\r\n" + chunk + "\r\n0\r\n\r\n"));
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 413);
  }
  {
    // Exactly at the limit is fine.
    Client client(server_->port());
    ASSERT_TRUE(client.Send(Post("/echo", std::string(1024, 'z'))));
    auto response = client.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
  }
  EXPECT_EQ(state_.echo_calls, 1);
  EXPECT_NE(
      metrics_.Render().find(R"(perfwarden_http_requests_total{route="protocol",status="413"} 3)"),
      std::string::npos);
}

TEST_F(HttpServerTest, HugeHeadersAre431) {
  StartServer({});
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/hello", "X-Padding: " + std::string(20 * 1024, 'p') + "\r\n")));
  auto response = client.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 431);
  EXPECT_EQ(ErrorCodeOf(*response), "HEADER_FIELDS_TOO_LARGE");
  EXPECT_TRUE(client.ReadsClosed());
}

TEST_F(HttpServerTest, GarbageIs400) {
  StartServer({});
  for (std::string_view garbage :
       {std::string_view("\x01\x02\x03 garbage\r\n\r\n"),
        std::string_view("GET / HTTX/1.1\r\n\r\n"),
        std::string_view("GET /hello HTTP/1.1\r\nBad Header\r\n\r\n"),
        std::string_view("POST /echo HTTP/1.1\r\nContent-Length: abc\r\n\r\n")}) {
    Client client(server_->port());
    ASSERT_TRUE(client.Send(garbage));
    auto response = client.Read();
    ASSERT_TRUE(response) << garbage;
    EXPECT_EQ(response->status, 400) << garbage;
    EXPECT_EQ(ErrorCodeOf(*response), "INVALID_ARGUMENT");
    EXPECT_TRUE(client.ReadsClosed());
  }
  // A well-formed request with a badly encoded target is a 400 too, on a kept connection.
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/hel%zzlo") + Get("/hello")));
  auto bad = client.Read();
  auto good = client.Read();
  ASSERT_TRUE(bad && good);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(good->status, 200);
}

TEST_F(HttpServerTest, SlowClientsAreCutWhileOthersAreServed) {
  ServerOptions options;
  options.threads = 1;  // a slow client holding the only thread would starve everyone
  options.read_timeout = 1s;
  StartServer(options);

  Client stalled(server_->port());
  ASSERT_TRUE(stalled.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc"));
  Client trickler(server_->port());
  std::atomic<bool> trickler_cut{false};
  std::thread trickle([&] {
    // One header byte at a time, forever: the whole-request timeout must still end it.
    if (!trickler.Send("GET /hello HTTP/1.1\r\nX-Slow: ")) return;
    for (int i = 0; i < 600 && !trickler_cut; ++i) {
      if (!trickler.Send("a")) break;
      std::this_thread::sleep_for(100ms);
    }
  });

  for (int i = 0; i < 3; ++i) {
    Client other(server_->port());
    ASSERT_TRUE(other.Send(Get("/hello")));
    auto response = other.Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
  }

  EXPECT_TRUE(stalled.ReadsClosed());
  EXPECT_EQ(stalled.extra_bytes(), 0u);  // closed without a response
  EXPECT_TRUE(trickler.ReadsClosed());
  trickler_cut = true;
  trickle.join();
  EXPECT_EQ(state_.echo_calls, 0);
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosed) {
  ServerOptions options;
  options.idle_timeout = 500ms;
  StartServer(options);
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/hello")));
  ASSERT_TRUE(client.Read());
  EXPECT_TRUE(client.ReadsClosed());
}

TEST_F(HttpServerTest, GracefulStopFinishesInFlightAndRefusesNew) {
  ServerOptions options;
  options.threads = 1;
  StartServer(options);
  std::uint16_t port = server_->port();

  Client idle(port);  // a keep-alive connection with nothing in flight
  ASSERT_TRUE(idle.Send(Get("/hello")));
  ASSERT_TRUE(idle.Read());

  Client in_flight(port);
  ASSERT_TRUE(in_flight.Send(Get("/slow")));
  ASSERT_EQ(state_.slow_entered.get_future().wait_for(kSafetyNet), std::future_status::ready);

  std::thread stopper([&] { server_->Stop(); });
  // Stop closes the listening socket at once, even with the only thread busy in the handler.
  bool refused = false;
  for (auto deadline = std::chrono::steady_clock::now() + kSafetyNet;
       !refused && std::chrono::steady_clock::now() < deadline;) {
    Client probe(port);
    refused = !probe.connected() && probe.connect_errno() == ECONNREFUSED;
    if (!refused) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(refused);

  state_.slow_release.set_value();
  auto response = in_flight.Read();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, R"({"slow":true})");
  EXPECT_EQ(response->headers["connection"], "close");
  EXPECT_TRUE(in_flight.ReadsClosed());
  EXPECT_TRUE(idle.ReadsClosed());
  stopper.join();
  server_->Stop();  // idempotent
}

TEST(HttpServerStartTest, PortInUseIsUnavailable) {
  State state;
  ServerOptions options;
  options.port = 0;
  Server first(options, MakeRouter(state));
  ASSERT_TRUE(first.Start().has_value());
  options.port = first.port();
  Server second(options, MakeRouter(state));
  auto started = second.Start();
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kUnavailable);
}

// A heavy handler runs on the compute pool: with a single I/O thread, a light request
// is answered while the heavy one computes, and a second heavy request waits its turn (one
// compute thread) instead of taking an I/O thread.
TEST_F(HttpServerTest, HeavyHandlersRunOnTheComputePoolWithoutBlockingLightOnes) {
  std::promise<void> release;
  state_.heavy_release = release.get_future().share();
  ServerOptions options;
  options.threads = 1;
  options.compute_threads = 1;
  StartServer(options);
  Client first(server_->port());
  Client second(server_->port());
  Client light(server_->port());
  ASSERT_TRUE(first.connected() && second.connected() && light.connected());
  ASSERT_TRUE(first.Send(Get("/heavy")));
  ASSERT_EQ(state_.heavy_entered.get_future().wait_for(kSafetyNet), std::future_status::ready);
  ASSERT_TRUE(second.Send(Get("/heavy")));
  ASSERT_TRUE(light.Send(Get("/hello")));
  auto hello = light.Read();  // before either heavy request is released
  ASSERT_TRUE(hello);
  EXPECT_EQ(hello->status, 200);
  EXPECT_EQ(state_.heavy_calls.load(), 1);  // the second waits for the only compute thread
  release.set_value();
  for (Client* client : {&first, &second}) {
    auto response = client->Read();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, R"({"heavy":true})");
  }
  EXPECT_EQ(state_.heavy_calls.load(), 2);
  // The connection stays usable after a response written from the compute pool.
  ASSERT_TRUE(first.Send(Get("/hello")));
  auto again = first.Read();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

}  // namespace
}  // namespace perfwarden::http
