// SPDX-License-Identifier: Apache-2.0
// Request framing on a real loopback socket: a request the server cannot read as it was meant
// (HTTP/1.1 without Host, a transfer or content coding it does not implement) is refused before
// routing and the connection closed; HEAD is answered as GET without the body.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "server/http/router.h"
#include "server/http/server.h"
#include "tests/testing/raw_socket.h"

namespace perfwarden::http {
namespace {

using testing::RawSocket;

constexpr std::string_view kHello = R"({"hello":"world"})";

class HttpFramingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Router router;
    router.Add("GET", "/hello", "hello", [this](const Request& request, const PathParams&) {
      ++calls_;
      last_method_ = request.method;
      return Response::Json(200, std::string(kHello));
    });
    router.Add("POST", "/echo", "echo", [this](const Request& request, const PathParams&) {
      ++calls_;
      return Response::Text(200, request.body);
    });
    ServerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<Server>(options, std::move(router));
    auto started = server_->Start();
    ASSERT_TRUE(started.has_value()) << started.error().ToString();
  }
  void TearDown() override { server_->Stop(); }

  // Sends `request` on a fresh connection; expects a refusal with `status` whose body names
  // `named`, the connection closed after it, and no handler run.
  void ExpectRefused(const std::string& request, int status, std::string_view named,
                     std::string_view version = "HTTP/1.1") {
    RawSocket socket(server_->port());
    ASSERT_TRUE(socket.Send(request));
    std::string head = socket.ReceiveHead();
    EXPECT_EQ(head.substr(0, 12), std::string(version) + " " + std::to_string(status)) << head;
    // HTTP/1.0 closes unless told otherwise: no Connection field is needed to say so.
    if (version != "HTTP/1.0") {
      EXPECT_NE(head.find("Connection: close"), std::string::npos) << head;
    }
    auto length_at = head.find("Content-Length: ");
    ASSERT_NE(length_at, std::string::npos) << head;
    std::string body = socket.Receive(std::stoul(head.substr(length_at + 16)));
    EXPECT_NE(body.find(named), std::string::npos) << body;
    EXPECT_TRUE(socket.ClosedWithoutAnswer());
    EXPECT_EQ(calls_, 0);
  }

  std::unique_ptr<Server> server_;
  std::atomic<int> calls_{0};
  std::string last_method_;
};

TEST_F(HttpFramingTest, Http11WithoutHostIs400) {
  ExpectRefused("GET /hello HTTP/1.1\r\n\r\n", 400, "Host");
}

// RFC 9112 section 6.1: Transfer-Encoding in an HTTP/1.0 message is faulty framing (1.0 has no
// chunked coding; an intermediary may read the body differently), answered 400 and closed.
TEST_F(HttpFramingTest, Http10WithTransferEncodingIs400AndClosed) {
  ExpectRefused("POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                400, "Transfer-Encoding", "HTTP/1.0");
}

// A second Authorization, Host or Content-Type is refused naming it, whichever came first;
// no handler sees the request (it would read only the first).
TEST_F(HttpFramingTest, RepeatedSingletonHeadersAre400NamingThem) {
  ExpectRefused(
      "GET /hello HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer a\r\n"
      "authorization: Bearer b\r\n\r\n",
      400, "more than one Authorization header");
  ExpectRefused("GET /hello HTTP/1.1\r\nHost: t\r\nHost: u\r\n\r\n", 400,
                "more than one Host header");
  ExpectRefused(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\n"
      "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
      400, "more than one Content-Type header");
}

TEST_F(HttpFramingTest, Http10WithoutHostIsServed) {
  RawSocket socket(server_->port());
  ASSERT_TRUE(socket.Send("GET /hello HTTP/1.0\r\n\r\n"));
  EXPECT_EQ(socket.ReceiveHead().substr(0, 12), "HTTP/1.0 200");
}

TEST_F(HttpFramingTest, GzipTransferCodingIs501NamingIt) {
  ExpectRefused(
      "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
      "3\r\nabc\r\n0\r\n\r\n",
      501, "gzip, chunked");
}

TEST_F(HttpFramingTest, ContentEncodingIs415NamingIt) {
  ExpectRefused(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
      415, "\\\"gzip\\\"");
}

TEST_F(HttpFramingTest, IdentityContentEncodingAndChunkedAreServed) {
  RawSocket socket(server_->port());
  ASSERT_TRUE(
      socket.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Encoding: identity\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"));
  std::string head = socket.ReceiveHead();
  EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 200") << head;
  EXPECT_EQ(socket.Receive(3), "abc");
}

TEST_F(HttpFramingTest, HeadAnswersLikeGetWithoutTheBody) {
  RawSocket socket(server_->port());
  ASSERT_TRUE(socket.Send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::string head = socket.ReceiveHead();
  EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 200") << head;
  EXPECT_NE(head.find("Content-Length: " + std::to_string(kHello.size()) + "\r\n"),
            std::string::npos)
      << head;
  EXPECT_NE(head.find("Content-Type: application/json"), std::string::npos) << head;
  EXPECT_EQ(last_method_, "GET");
  // No body followed: the next response on the connection starts right after the head.
  ASSERT_TRUE(socket.Send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(socket.ReceiveHead().substr(0, 12), "HTTP/1.1 200");
  EXPECT_EQ(socket.Receive(kHello.size()), kHello);
}

TEST_F(HttpFramingTest, HeadOnAPostOnlyPathIs405) {
  RawSocket socket(server_->port());
  ASSERT_TRUE(socket.Send("HEAD /echo HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::string head = socket.ReceiveHead();
  EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 405") << head;
  EXPECT_NE(head.find("Allow: POST"), std::string::npos) << head;
}

}  // namespace
}  // namespace perfwarden::http
