// SPDX-License-Identifier: Apache-2.0
// The only translation unit that instantiates Beast templates (build time on small CI machines;
// listener.cc, the accept loop, uses Asio's acceptor only). One Session per connection, all of
// its work on one strand; light handlers run synchronously on the I/O thread that finished
// reading the request, heavy ones (Router::Cost) admitted to the compute pool (heavy_queue.h)
// or refused at once, the session resuming on its strand with the response.
#include "server/http/server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <exception>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "core/heap.h"
#include "core/request_id.h"
#include "server/http/compression.h"
#include "server/http/errors.h"
#include "server/http/framing.h"
#include "server/http/heavy_queue.h"
#include "server/http/listener.h"
#include "server/http/memory_budget.h"
#include "server/http/session_registry.h"

namespace perfwarden::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// Route label for answers the server gives before any route is known (400, 413, 431).
constexpr std::string_view kProtocolRoute = "protocol";
// How long a connection closed after an error keeps draining what the client still sends, so
// that the kernel does not answer the unread bytes with a reset that destroys our response.
constexpr std::chrono::milliseconds kMaxLinger{5'000};
// While the server stops, a request is read only from what has arrived: a read begun then (the
// rest of a request whose first bytes were waiting, or a body after its header) ends after this.
constexpr std::chrono::milliseconds kStopReadGrace{1'000};

class Session;

}  // namespace

struct Server::Impl {
  ServerOptions options;
  Router router;
  Metrics* metrics = nullptr;

  std::optional<net::io_context> ioc;
  // Keeps the I/O threads in run() until Stop() stops them. Without it the context stops by
  // itself once nothing is pending on it (the listener closed, and the last session closing or
  // its heavy handler still on the compute pool): what is posted after that (Stop()'s Shutdown,
  // the heavy response) never runs and Stop() waits its whole shutdown_timeout.
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  // Heavy handlers, admitted and taken first come, first served (the I/O threads, never
  // blocked by them, read each request as it arrives).
  std::optional<HeavyQueue> heavy;
  std::optional<MemoryBudget> memory;  // request bodies in flight (memory_budget.h)
  std::optional<Listener> listener;    // the accept loop and the connection cap
  std::vector<std::thread> threads;
  std::atomic<std::uint16_t> port{0};
  std::atomic<bool> stopping{false};
  bool started = false;
  bool stopped = false;

  SessionRegistry<Session> sessions;

  void Admit(tcp::socket socket);  // a connection under the cap: its Session, registered
  // Asks the session that has waited longest for a request (sent nothing since its last
  // answer, or nothing at all) to close; false when none is waiting. With `unless_closing`,
  // true without asking another when one asked before is still closing (out of descriptors,
  // one closing is the room the next accept needs).
  bool EvictLongestIdle(bool unless_closing);
  std::atomic<int> closing_for_room{0};  // sessions asked to close and not yet gone
  void Observe(std::string_view route, int status, double seconds) {
    if (metrics != nullptr) metrics->ObserveRequest(route, status, seconds);
  }
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, Server::Impl* server)
      : stream_(std::move(socket)), server_(server) {
    beast::error_code ec;
    auto endpoint = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  }
  ~Session() {
    if (evicted_.exchange(false)) {
      --server_->closing_for_room;
      // Its descriptor is free (Close() closed the socket): an accept waiting for room goes on.
      // The listener outlives every session but those Stop() abandons, which it destroys
      // after resetting it.
      if (server_->listener) server_->listener->Resume();
    }
    server_->sessions.Remove(this);
  }

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->WaitForRequest(); });
  }

  // Called from Stop(), on any thread. A connection waiting for a request, or for the rest of
  // one, with no byte of it unread is cut; one whose request is (or may be) fully received goes
  // on, is answered and then closes (Stop() caps how long).
  void Shutdown() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      const bool waiting = self->state_ == State::kIdle || self->state_ == State::kReading;
      if (waiting && !self->BytesUnread(self->state_ == State::kIdle)) self->stream_.cancel();
    });
  }

  // Since when this connection has waited for a request (steady clock, ns); kNotIdle while a
  // request is read, handled or answered, or once it was asked to close. Read on any thread.
  static constexpr std::int64_t kNotIdle = std::numeric_limits<std::int64_t>::max();
  std::int64_t idle_since() const { return idle_since_.load(std::memory_order_relaxed); }

  // Called by EvictLongestIdle on any thread: closes the connection if it is still waiting for
  // a request when its strand runs this (a request that began meanwhile is served).
  void Evict() {
    idle_since_.store(kNotIdle, std::memory_order_relaxed);  // not chosen twice
    evicted_ = true;
    ++server_->closing_for_room;
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      if (self->state_ == State::kIdle) return self->stream_.cancel();        // closes; then gone
      if (self->evicted_.exchange(false)) --self->server_->closing_for_room;  // a request began
    });
  }

 private:
  enum class State { kIdle, kReading, kHandling, kWriting, kClosing };

  const ServerOptions& options() const { return server_->options; }
  std::chrono::milliseconds HeaderTimeout() const {
    return std::min(options().header_timeout, options().read_timeout);
  }

  // Bytes of a request that the kernel holds and nobody has read (or, `buffered`, the buffer
  // holds): a client that sent them before the stop is answered.
  bool BytesUnread(bool buffered) {
    beast::error_code ec;
    return (buffered && buffer_.size() > 0) || stream_.socket().available(ec) > 0;
  }

  std::chrono::steady_clock::time_point ReadDeadline(std::chrono::steady_clock::time_point at) {
    return server_->stopping ? std::min(at, std::chrono::steady_clock::now() + kStopReadGrace) : at;
  }

  void WaitForRequest() {
    if (server_->stopping && !BytesUnread(true)) return Close();
    state_ = State::kIdle;
    // Pipelined bytes already buffered: the next request has begun.
    if (buffer_.size() > 0) return ReadHeader();
    // The idle timeout runs until the first byte; from there the read timeout covers the whole
    // request. A fresh connection is expected to send at once.
    stream_.expires_after(first_request_ ? HeaderTimeout() : options().idle_timeout);
    idle_since_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                      std::memory_order_relaxed);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->Close();
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    state_ = State::kReading;
    idle_since_.store(kNotIdle, std::memory_order_relaxed);
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(options().header_limit, std::numeric_limits<std::uint32_t>::max())));
    parser_->body_limit(options().body_limit);
    request_started_ = std::chrono::steady_clock::now();
    head_request_ = false;
    stream_.expires_at(ReadDeadline(request_started_ + HeaderTimeout()));
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, std::size_t) {
                               if (ec) return self->OnReadError(ec);
                               self->OnHeader();
                             });
  }

  void OnHeader() {
    const auto& request = parser_->get();
    std::string_view repeated;
    for (std::string_view name : kSingletonFields) {
      if (repeated.empty() && request.count(name) > 1) repeated = name;
    }
    if (auto refused =
            RefuseFraming({request.version(), request.find(bhttp::field::host) != request.end(),
                           request[bhttp::field::content_encoding],
                           request[bhttp::field::transfer_encoding], repeated})) {
      return Refuse(std::move(*refused), request.version());
    }
    const std::size_t body = MemoryBudget::BodyBytes(parser_->content_length().value_or(0),
                                                     parser_->chunked(), options().body_limit);
    if (auto refused = server_->memory->Admit(body, &body_memory_)) {
      return Refuse(std::move(*refused), request.version());
    }
    auto expect = request[bhttp::field::expect];
    if (request.version() >= 11 && beast::iequals(expect, "100-continue") && !parser_->is_done()) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                       [self = shared_from_this()](beast::error_code ec, std::size_t) {
                         if (ec) return self->Close();
                         self->ReadBody();
                       });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    stream_.expires_at(ReadDeadline(request_started_ + options().read_timeout));
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec) return self->OnReadError(ec);
                        self->Dispatch();
                      });
  }

  void OnReadError(beast::error_code ec) {
    // Timeouts close the socket inside tcp_stream; EOF, resets and cancellation leave nobody
    // to answer.
    if (ec.category() != bhttp::make_error_code(bhttp::error::end_of_stream).category() ||
        ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message) {
      return Close();
    }
    Response response;
    if (ec == bhttp::error::body_limit) {
      response = PayloadTooLarge(options().body_limit);
    } else if (ec == bhttp::error::header_limit) {
      response = HeaderFieldsTooLarge(options().header_limit);
    } else {
      response = BadRequest("malformed HTTP request: " + ec.message());
    }
    Refuse(std::move(response), 11);
  }

  // An answer before any route (framing, limits, a malformed request; a body stays unread): counted
  // under the protocol route, then the connection lingers and closes.
  void Refuse(Response response, unsigned version) {
    server_->Observe(kProtocolRoute, response.status, 0.0);
    Write(std::move(response), /*keep_alive=*/false, /*linger=*/true, version);
  }

  void Dispatch() {
    state_ = State::kHandling;
    auto started = std::chrono::steady_clock::now();
    auto& message = parser_->get();
    Request request;
    request.method = std::string(message.method_string());
    // HEAD is answered as GET without the body (its Content-Length is the GET body's).
    if (request.method == "HEAD") {
      head_request_ = true;
      request.method = "GET";
    }
    request.remote_address = remote_;
    request.id = NewRequestId();
    for (const auto& field : message) {
      request.headers.Add(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(message.body());
    const bool keep_alive = message.keep_alive();
    const unsigned version = message.version();
    auto parsed = ParseTarget(message.target(), request);
    parser_.reset();
    if (!parsed) {
      return Respond({ErrorResponse(parsed.error()), std::string(kProtocolRoute)}, started,
                     keep_alive, version);
    }
    if (const Router::Costed costed = server_->router.CostOf(request);
        server_->heavy && costed.cost == Router::Cost::kHeavy) {
      auto refused = server_->heavy->Submit(
          server_->router, costed.route, std::move(request),
          [self = shared_from_this(), started, keep_alive, version](Router::Routed routed) {
            net::post(self->stream_.get_executor(),
                      [self, routed = std::move(routed), started, keep_alive, version]() mutable {
                        self->Respond(std::move(routed), started, keep_alive, version);
                      });
          });
      if (refused) Respond(std::move(*refused), started, keep_alive, version);
      return;
    }
    Router::Routed routed = server_->router.Route(request);
    CompressIfAccepted(request, routed.response);
    Respond(std::move(routed), started, keep_alive, version);
  }

  void Respond(Router::Routed routed, std::chrono::steady_clock::time_point started,
               bool keep_alive, unsigned version) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    server_->Observe(routed.route, routed.response.status, seconds);
    Write(std::move(routed.response), keep_alive && !server_->stopping, /*linger=*/false, version);
  }

  void Write(Response response, bool keep_alive, bool linger, unsigned version) {
    state_ = State::kWriting;
    response_ = {};
    response_.version(version);
    FrameResponse(response);
    response_.result(static_cast<unsigned>(response.status));
    response_.set(bhttp::field::server, "perfwarden");
    if (!response.content_type.empty()) {
      response_.set(bhttp::field::content_type, response.content_type);
    }
    for (const auto& [name, value] : response.headers.fields()) response_.insert(name, value);
    response_.body() = std::move(response.body);
    response_.keep_alive(keep_alive);
    response_.prepare_payload();
    if (head_request_) response_.body().clear();  // Content-Length stays the GET body's
    // The body's place goes back before the client can send its next request; the heap the
    // request freed goes back to the system once the answer is out (memory_budget.h).
    trim_after_write_ = body_memory_.bytes() >= MemoryBudget::kTrimAfterBytes;
    body_memory_.Release();
    stream_.expires_after(options().read_timeout);
    bhttp::async_write(stream_, response_,
                       [self = shared_from_this(), linger](beast::error_code ec, std::size_t) {
                         if (self->trim_after_write_) ReturnFreedMemory();
                         if (ec) return self->Close();
                         if (linger) return self->Linger();
                         if (!self->response_.keep_alive()) return self->Close();
                         self->first_request_ = false;
                         self->WaitForRequest();
                       });
  }

  // Half-closes and discards input until the client closes (or a short deadline), so the error
  // response just written reaches a client that is still sending its body.
  void Linger() {
    state_ = State::kClosing;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return Close();
    stream_.expires_after(std::min<std::chrono::milliseconds>(options().read_timeout, kMaxLinger));
    Drain();
  }

  void Drain() {
    stream_.async_read_some(net::buffer(drain_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->Close();
                              self->Drain();
                            });
  }

  void Close() {
    state_ = State::kClosing;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  beast::tcp_stream stream_;
  Server::Impl* server_;
  std::string remote_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::string_body> response_;
  MemoryBudget::Reservation body_memory_;  // the request's body, until its answer is ready
  bool trim_after_write_ = false;          // the answer is to a large body's request
  std::array<char, 4096> drain_{};
  State state_ = State::kIdle;
  std::chrono::steady_clock::time_point request_started_;
  bool first_request_ = true;
  bool head_request_ = false;  // the request being answered is a HEAD
  std::atomic<std::int64_t> idle_since_{kNotIdle};
  std::atomic<bool> evicted_{false};  // counted in closing_for_room
};

}  // namespace

void Server::Impl::Admit(tcp::socket socket) {
  auto session = std::make_shared<Session>(std::move(socket), this);
  sessions.Add(session);
  session->Start();
}

bool Server::Impl::EvictLongestIdle(bool unless_closing) {
  if (unless_closing && closing_for_room > 0) return true;
  std::shared_ptr<Session> longest = sessions.LongestIdle();
  if (!longest) return false;
  longest->Evict();
  return true;
}

Server::Server(ServerOptions options, Router router, Metrics* metrics)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->router = std::move(router);
  impl_->metrics = metrics;
}

Server::~Server() { Stop(); }

std::uint16_t Server::port() const { return impl_->port; }

std::size_t Server::ConnectionCount() const { return impl_->sessions.Count(); }

Result<void> Server::Start() {
  Impl& impl = *impl_;
  if (impl.started) return MakeError(ErrorCode::kInternal, "server already started");
  impl.started = true;
  int threads = impl.options.threads > 0
                    ? impl.options.threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  impl.ioc.emplace(threads);
  impl.work.emplace(impl.ioc->get_executor());
  std::string where = impl.options.host + ":" + std::to_string(impl.options.port);
  try {
    tcp::resolver resolver(*impl.ioc);
    auto endpoints = resolver.resolve(impl.options.host, std::to_string(impl.options.port),
                                      tcp::resolver::passive | tcp::resolver::numeric_service);
    if (endpoints.empty()) {
      impl.work.reset();
      impl.ioc.reset();
      return MakeError(ErrorCode::kUnavailable, "cannot resolve " + where);
    }
    impl.listener.emplace(
        *impl.ioc, endpoints.begin()->endpoint(), impl.options.max_connections,
        Listener::Callbacks{
            [&impl] { return impl.sessions.Count(); },
            [&impl](tcp::socket socket) { impl.Admit(std::move(socket)); },
            [&impl](bool unless_closing) { return impl.EvictLongestIdle(unless_closing); }});
    impl.port = impl.listener->port();
  } catch (const boost::system::system_error& e) {
    impl.listener.reset();
    impl.work.reset();
    impl.ioc.reset();
    return MakeError(ErrorCode::kUnavailable, "cannot listen on " + where + ": " + e.what());
  }
  impl.heavy.emplace(
      AdmissionLimits{
          impl.options.heavy_requests, impl.options.heavy_requests_per_caller,
          static_cast<std::size_t>(impl.options.compute_threads > 0 ? impl.options.compute_threads
                                                                    : threads + 1)},
      impl.metrics);
  impl.memory.emplace(std::max(impl.options.request_memory_bytes, impl.options.body_limit),
                      impl.metrics);
  impl.listener->Start();
  for (int i = 0; i < threads; ++i) {
    impl.threads.emplace_back([&impl] {
      // An exception escaping a completion handler (bad_alloc) costs that connection, not the
      // thread: run() is resumed until Stop() stops the context.
      while (true) {
        try {
          impl.ioc->run();
          return;
        } catch (const std::exception&) {
        }
      }
    });
  }
  return {};
}

void Server::Stop() {
  Impl& impl = *impl_;
  if (!impl.started || impl.stopped || !impl.ioc) return;
  impl.stopped = true;
  impl.stopping = true;
  // Closed here rather than on the pool: new connections are refused at once even while every
  // pool thread is busy in a handler. The connections already made (in the backlog) are
  // admitted first: their requests may be sent whole, and closing them unaccepted resets them.
  impl.listener->Close(/*admit_backlog=*/true);
  for (const auto& session : impl.sessions.Live()) session->Shutdown();
  impl.sessions.WaitUntilEmpty(impl.options.shutdown_timeout);
  impl.ioc->stop();
  for (std::thread& thread : impl.threads) thread.join();
  impl.threads.clear();
  // A heavy handler still running finishes (its response has nowhere to go); queued ones run
  // too, against a stopped context that never resumes their sessions.
  impl.heavy->Join();
  // Destroys the handlers still queued, and with them the abandoned sessions, while the rest
  // of Impl is alive.
  impl.listener.reset();
  impl.work.reset();
  impl.ioc.reset();
  impl.heavy.reset();
}

}  // namespace perfwarden::http
