#include "server/http/listener.h"

#include <spdlog/spdlog.h>

#include <boost/asio/strand.hpp>
#include <utility>

namespace perfgate::http {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// accept() failures that concern the server's resources, not the one connection.
bool IsResourceExhaustion(const boost::system::error_code& ec) {
  return ec == net::error::no_descriptors ||
         ec == boost::system::errc::too_many_files_open_in_system ||
         ec == net::error::no_buffer_space || ec == net::error::no_memory;
}

}  // namespace

Listener::Listener(net::io_context& ioc, const tcp::endpoint& endpoint, std::size_t max_connections,
                   Callbacks callbacks)
    : ioc_(ioc),
      max_connections_(max_connections),
      callbacks_(std::move(callbacks)),
      acceptor_(ioc),
      backoff_(ioc) {
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
  port_ = acceptor_.local_endpoint().port();
}

void Listener::Start() {
  std::lock_guard lock(mutex_);
  DoAccept();
}

void Listener::Close() {
  closed_ = true;
  std::lock_guard lock(mutex_);
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  backoff_.cancel();
}

void Listener::DoAccept() {
  // Each connection on a strand of its own: its session's handlers never run concurrently.
  acceptor_.async_accept(net::make_strand(ioc_),
                         [this](const boost::system::error_code& ec, tcp::socket socket) {
                           OnAccept(ec, std::move(socket));
                         });
}

void Listener::OnAccept(const boost::system::error_code& ec, tcp::socket socket) {
  if (!ec && !closed_) Admit(std::move(socket));
  std::lock_guard lock(mutex_);
  if (!acceptor_.is_open()) return;  // closed by Close()
  if (ec && IsResourceExhaustion(ec)) {
    if (failures_in_burst_++ == 0) {
      spdlog::error("cannot accept connections: {}; pausing accept for {} ms at a time",
                    ec.message(), kBackoff.count());
    }
    backoff_.expires_after(kBackoff);
    backoff_.async_wait([this](const boost::system::error_code& wait_ec) {
      std::lock_guard relock(mutex_);
      if (!wait_ec && acceptor_.is_open()) DoAccept();
    });
    return;
  }
  // Other errors (a connection reset before it was accepted) concern that connection only.
  DoAccept();
}

void Listener::Admit(tcp::socket socket) {
  if (callbacks_.open_connections() >= max_connections_) {
    if (refused_in_burst_++ == 0) {
      spdlog::warn("{} connections open (max_connections): closing new connections at once",
                   max_connections_);
    }
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  if (failures_in_burst_ > 0) {
    spdlog::info("accepting connections again after {} failed accepts", failures_in_burst_);
    failures_in_burst_ = 0;
  }
  if (refused_in_burst_ > 0) {
    spdlog::info("accepting connections again after closing {} over max_connections",
                 refused_in_burst_);
    refused_in_burst_ = 0;
  }
  callbacks_.admit(std::move(socket));
}

}  // namespace perfgate::http
