// The HTTP server's connection limits on a real loopback socket: max_connections (a connection
// beyond it is closed at once) and header_timeout (a connection that sends nothing, or a header
// that trickles, gives its slot back long before read_timeout). Raw sockets stand for idle
// clients; testing::HttpClient sends the normal requests. Timeouts are safety nets only.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/http/router.h"
#include "server/http/server.h"
#include "tests/testing/http_client.h"

namespace perfgate::http {
namespace {

using namespace std::chrono_literals;

constexpr auto kSafetyNet = 60s;
// Longer than kSafetyNet: a connection closed within the safety net was closed by something else.
constexpr std::chrono::milliseconds kNever = 2 * kSafetyNet;

// A connection that sends only what the test says; reads end after kSafetyNet.
class RawSocket {
 public:
  explicit RawSocket(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    timeval timeout{std::chrono::duration_cast<std::chrono::seconds>(kSafetyNet).count(), 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }
  bool Send(std::string_view data) {
    return ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  }
  // Up to n bytes, waiting for all of them (or the end of the connection, or the safety net).
  std::string Receive(std::size_t n) {
    std::string data(n, '\0');
    ssize_t got = ::recv(fd_, data.data(), n, MSG_WAITALL);
    data.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return data;
  }
  // True when the server closed the connection without sending a byte.
  bool ClosedWithoutAnswer() {
    char byte;
    ssize_t n = ::recv(fd_, &byte, 1, 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  int fd_;
  bool connected_ = false;
};

Router MakeRouter() {
  Router router;
  router.Add("GET", "/hello", "hello",
             [](const Request&, const PathParams&) { return Response::Json(200, R"({"hi":1})"); });
  router.Add("POST", "/echo", "echo", [](const Request& request, const PathParams&) {
    return Response::Text(200, request.body);
  });
  return router;
}

class HttpConnectionLimitsTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options) {
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<Server>(options, MakeRouter());
    auto started = server_->Start();
    ASSERT_TRUE(started.has_value()) << started.error().ToString();
  }
  // GET /hello on fresh connections until one answers 200 (a connection closed over the cap
  // answers nothing) or the safety net runs out.
  bool EventuallyServed() {
    for (auto deadline = std::chrono::steady_clock::now() + kSafetyNet;
         std::chrono::steady_clock::now() < deadline;) {
      testing::HttpClient client(server_->port());
      if (client.Get("/hello").status == 200) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::unique_ptr<Server> server_;
};

TEST_F(HttpConnectionLimitsTest, ConnectionBeyondTheCapIsClosedAtOnceAndASlotFreedIsReused) {
  ServerOptions options;
  options.max_connections = 2;
  options.header_timeout = kNever;  // only the cap can close the third connection in time
  options.read_timeout = kNever;
  StartServer(options);

  auto first = std::make_unique<RawSocket>(server_->port());
  RawSocket second(server_->port());
  RawSocket third(server_->port());
  ASSERT_TRUE(first->connected() && second.connected() && third.connected());
  EXPECT_TRUE(third.ClosedWithoutAnswer());

  first.reset();  // its session ends on EOF and gives its slot back
  EXPECT_TRUE(EventuallyServed());
}

TEST_F(HttpConnectionLimitsTest, IdleConnectionsAtTheCapStillLetARequestThrough) {
  ServerOptions options;
  options.max_connections = 4;
  options.header_timeout = 300ms;
  options.read_timeout = kNever;
  StartServer(options);

  std::vector<std::unique_ptr<RawSocket>> idle;
  for (int i = 0; i < 12; ++i) idle.push_back(std::make_unique<RawSocket>(server_->port()));
  EXPECT_TRUE(EventuallyServed());
  // Each was closed: over the cap at once, or by the header timeout.
  for (auto& socket : idle) EXPECT_TRUE(socket->ClosedWithoutAnswer());
}

TEST_F(HttpConnectionLimitsTest, HeaderTimeoutCutsAStalledHeaderButNotASlowBody) {
  ServerOptions options;
  options.header_timeout = 300ms;
  options.read_timeout = kNever;
  StartServer(options);

  RawSocket stalled(server_->port());
  ASSERT_TRUE(stalled.Send("GET /hello HTTP/1.1\r\nHost: t\r\n"));
  EXPECT_TRUE(stalled.ClosedWithoutAnswer());

  // The body has read_timeout from the request's first byte, not header_timeout.
  RawSocket slow_body(server_->port());
  ASSERT_TRUE(slow_body.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\na"));
  std::this_thread::sleep_for(600ms);
  ASSERT_TRUE(slow_body.Send("bc"));
  EXPECT_EQ(slow_body.Receive(12), "HTTP/1.1 200");
}

}  // namespace
}  // namespace perfgate::http
