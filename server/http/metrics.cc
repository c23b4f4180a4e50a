// SPDX-License-Identifier: Apache-2.0
#include "server/http/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace perfwarden::http {

namespace {

// Label values escape backslash, double quote and newline; HELP text escapes backslash and
// newline (exposition format 0.0.4).
std::string Escape(std::string_view text, bool quote) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string FormatLabels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    out += labels[i].first + "=\"" + Escape(labels[i].second, true) + '"';
  }
  return out + '}';
}

void Header(std::string& out, std::string_view name, std::string_view help, std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += Escape(help, false);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

}  // namespace

const std::vector<double>& Metrics::LatencyBuckets() {
  static const std::vector<double> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                               0.25,  0.5,    1,     2.5,  5,     10};
  return kBuckets;
}

void Metrics::ObserveRequest(std::string_view route, int status, double seconds) {
  const auto& bounds = LatencyBuckets();
  auto bucket =
      static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin());
  std::lock_guard lock(mutex_);
  ++requests_[{std::string(route), status}];
  Histogram& histogram = latency_[std::string(route)];
  if (histogram.buckets.empty()) histogram.buckets.assign(bounds.size() + 1, 0);
  ++histogram.buckets[bucket];
  ++histogram.count;
  histogram.sum += seconds;
}

Counter* Metrics::AddCounter(std::string name, std::string help) {
  std::lock_guard lock(mutex_);
  for (NamedCounter& existing : counters_) {
    if (existing.name == name) return &existing.counter;
  }
  counters_.emplace_back();
  counters_.back().name = std::move(name);
  counters_.back().help = std::move(help);
  return &counters_.back().counter;
}

void Metrics::AddGauge(std::string name, std::string help,
                       std::function<std::vector<GaugeSample>()> read) {
  std::lock_guard lock(mutex_);
  gauges_.push_back({std::move(name), std::move(help), std::move(read)});
}

void Metrics::AddGauge(std::string name, std::string help, std::function<double()> read) {
  AddGauge(std::move(name), std::move(help),
           std::function<std::vector<GaugeSample>()>([read = std::move(read)] {
             return std::vector<GaugeSample>{{{}, read()}};
           }));
}

std::string Metrics::Render() const {
  std::string out;
  std::vector<Gauge> gauges;
  {
    std::lock_guard lock(mutex_);
    Header(out, "perfwarden_http_requests_total", "HTTP requests by route and status.", "counter");
    for (const auto& [key, count] : requests_) {
      out += "perfwarden_http_requests_total" +
             FormatLabels({{"route", key.first}, {"status", std::to_string(key.second)}}) + ' ' +
             std::to_string(count) + '\n';
    }
    Header(out, "perfwarden_http_request_duration_seconds",
           "HTTP request latency by route, from the last byte read to the response built.",
           "histogram");
    const auto& bounds = LatencyBuckets();
    for (const auto& [route, histogram] : latency_) {
      std::uint64_t cumulative = 0;
      for (size_t i = 0; i <= bounds.size(); ++i) {
        cumulative += histogram.buckets[i];
        std::string le = i < bounds.size() ? FormatDouble(bounds[i]) : "+Inf";
        out += "perfwarden_http_request_duration_seconds_bucket" +
               FormatLabels({{"route", route}, {"le", le}}) + ' ' + std::to_string(cumulative) +
               '\n';
      }
      out += "perfwarden_http_request_duration_seconds_sum" + FormatLabels({{"route", route}}) +
             ' ' + FormatDouble(histogram.sum) + '\n';
      out += "perfwarden_http_request_duration_seconds_count" + FormatLabels({{"route", route}}) +
             ' ' + std::to_string(histogram.count) + '\n';
    }
    for (const NamedCounter& counter : counters_) {
      Header(out, counter.name, counter.help, "counter");
      out += counter.name + ' ' + std::to_string(counter.counter.value()) + '\n';
    }
    gauges = gauges_;
  }
  // Callbacks run outside the lock: they may take their own (the pool's) locks.
  for (const Gauge& gauge : gauges) {
    Header(out, gauge.name, gauge.help, "gauge");
    for (const GaugeSample& sample : gauge.read()) {
      out += gauge.name + FormatLabels(sample.labels) + ' ' + FormatDouble(sample.value) + '\n';
    }
  }
  return out;
}

}  // namespace perfwarden::http
