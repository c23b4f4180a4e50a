// SPDX-License-Identifier: Apache-2.0
// gzip Content-Encoding: who asks for it (Accept-Encoding with qualities), what is compressed,
// and that the bytes are a gzip member that zlib inflates back to the body.
#include "server/http/compression.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace perfwarden::http {
namespace {

std::string Gunzip(const std::string& packed) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  stream.avail_in = static_cast<uInt>(packed.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

Request WithEncoding(std::string accept) {
  Request request;
  request.method = "GET";
  request.path = "/";
  if (!accept.empty()) request.headers.Add("Accept-Encoding", std::move(accept));
  return request;
}

std::string Json(size_t points) {
  std::string body = "{\"points\":[";
  for (size_t i = 0; i < points; ++i) {
    body += (i ? "," : "") + std::string("{\"median\":") + std::to_string(1000 + i % 7) + "}";
  }
  return body + "]}";
}

TEST(Compression, AcceptEncodingAndQualities) {
  EXPECT_TRUE(AcceptsGzip(WithEncoding("gzip")));
  EXPECT_TRUE(AcceptsGzip(WithEncoding("gzip, deflate, br, zstd")));  // Chromium's
  EXPECT_TRUE(AcceptsGzip(WithEncoding("br;q=1.0, GZIP;q=0.5")));
  EXPECT_TRUE(AcceptsGzip(WithEncoding("*")));
  EXPECT_FALSE(AcceptsGzip(WithEncoding("")));
  EXPECT_FALSE(AcceptsGzip(WithEncoding("identity")));
  EXPECT_FALSE(AcceptsGzip(WithEncoding("gzip;q=0")));
  EXPECT_FALSE(AcceptsGzip(WithEncoding("*, gzip;q=0")));  // the explicit entry wins
  EXPECT_FALSE(AcceptsGzip(WithEncoding("gzip;q=abc")));
  EXPECT_FALSE(AcceptsGzip(WithEncoding("br")));
}

TEST(Compression, GzipRoundTrips) {
  const std::string body = Json(5000);
  auto packed = Gzip(body, 1);
  ASSERT_TRUE(packed);
  EXPECT_EQ(static_cast<unsigned char>((*packed)[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>((*packed)[1]), 0x8b);
  EXPECT_LT(packed->size(), body.size() / 4);
  EXPECT_EQ(Gunzip(*packed), body);
  EXPECT_EQ(Gunzip(*Gzip("", 6)), "");
}

TEST(Compression, CompressesLargeTextualAnswersForClientsThatAsk) {
  Response json = Response::Json(200, Json(1000));
  const std::string original = json.body;
  CompressIfAccepted(WithEncoding("gzip, deflate"), json);
  EXPECT_EQ(json.headers.Get("Content-Encoding"), "gzip");
  EXPECT_EQ(json.headers.Get("Vary"), "Accept-Encoding");
  EXPECT_EQ(Gunzip(json.body), original);

  Response plain = Response::Json(200, original);
  CompressIfAccepted(WithEncoding(""), plain);  // did not ask
  EXPECT_EQ(plain.body, original);
  EXPECT_FALSE(plain.headers.Contains("Content-Encoding"));
  EXPECT_EQ(plain.headers.Get("Vary"), "Accept-Encoding");

  Response small = Response::Json(200, "{\"status\":\"ok\"}");
  CompressIfAccepted(WithEncoding("gzip"), small);
  EXPECT_EQ(small.body, "{\"status\":\"ok\"}");

  Response png = Response::Text(200, std::string(5000, 'x'), "image/png");
  CompressIfAccepted(WithEncoding("gzip"), png);
  EXPECT_FALSE(png.headers.Contains("Content-Encoding"));
  EXPECT_FALSE(png.headers.Contains("Vary"));

  Response script = Response::Text(200, std::string(5000, 'y'), "text/javascript; charset=utf-8");
  CompressIfAccepted(WithEncoding("gzip"), script);
  EXPECT_EQ(script.headers.Get("Content-Encoding"), "gzip");
}

}  // namespace
}  // namespace perfwarden::http
