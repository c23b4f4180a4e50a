// SPDX-License-Identifier: Apache-2.0
// The dashboard's static files: the built-in copy of web/ served at / and /ui/, revalidation by
// ETag, the security headers, and the paths that must never reach the disk.
#include "server/web/dashboard.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "server/web/assets.h"

namespace perfwarden::server::web {
namespace {

http::Request Get(std::string path, std::string if_none_match = "") {
  http::Request request;
  request.method = "GET";
  request.path = std::move(path);
  if (!if_none_match.empty()) request.headers.Set("If-None-Match", if_none_match);
  return request;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const std::filesystem::path kWeb =
    std::filesystem::path(PERFWARDEN_FIXTURES_DIR) / ".." / ".." / "web";

TEST(Dashboard, EmbedsEveryFileOfWebExactly) {
  size_t on_disk = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kWeb)) {
    if (!entry.is_regular_file()) continue;
    const std::string relative = std::filesystem::relative(entry.path(), kWeb).generic_string();
    if (relative.find("/.") != std::string::npos || relative.front() == '.') continue;
    ++on_disk;
    bool found = false;
    for (const EmbeddedFile& file : EmbeddedAssets()) {
      if (file.path == relative) {
        found = true;
        EXPECT_EQ(file.bytes, ReadFile(entry.path())) << relative;
        EXPECT_EQ(file.sha256.size(), 64u) << relative;
      }
    }
    EXPECT_TRUE(found) << relative << " is not built in";
  }
  EXPECT_EQ(EmbeddedAssets().size(), on_disk);
  for (size_t i = 1; i < EmbeddedAssets().size(); ++i) {
    EXPECT_LT(EmbeddedAssets()[i - 1].path, EmbeddedAssets()[i].path);  // binary search needs it
  }
}

TEST(Dashboard, IndexPreloadsEveryModule) {
  // The series page is four imports deep; index.html names every module so that the browser
  // fetches them at once. A module added without its line would only be slower: caught here.
  const std::string index = ReadFile(kWeb / "index.html");
  for (const auto& entry : std::filesystem::directory_iterator(kWeb / "js")) {
    if (entry.path().extension() != ".js") continue;
    const std::string link =
        "<link rel=\"modulepreload\" href=\"/ui/js/" + entry.path().filename().string() + "\">";
    EXPECT_NE(index.find(link), std::string::npos) << link;
  }
}

TEST(Dashboard, ServesIndexAtRootAndFilesUnderUi) {
  http::Router router;
  RegisterDashboardRoutes(router, {});
  http::Response index = router.Handle(Get("/"));
  ASSERT_EQ(index.status, 200);
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(index.body, ReadFile(kWeb / "index.html"));
  EXPECT_NE(index.headers.Get("Content-Security-Policy")->find("default-src 'self'"),
            std::string::npos);
  EXPECT_EQ(index.headers.Get("X-Content-Type-Options"), "nosniff");

  http::Response uplot = router.Handle(Get("/ui/vendor/uplot/uPlot.iife.min.js"));
  ASSERT_EQ(uplot.status, 200);
  EXPECT_EQ(uplot.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(router.Handle(Get("/ui/vendor/uplot/LICENSE")).content_type,
            "text/plain; charset=utf-8");

  // Revalidation: the ETag it sent gives a 304 without a body.
  const std::string etag(*uplot.headers.Get("ETag"));
  http::Response again = router.Handle(Get("/ui/vendor/uplot/uPlot.iife.min.js", etag));
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(router.Handle(Get("/ui/vendor/uplot/uPlot.iife.min.js", "\"other\"")).status, 200);

  EXPECT_EQ(router.Handle(Get("/ui/missing.js")).status, 404);
  EXPECT_EQ(router.Handle(Get("/ui/vendor/%2e%2e/index.html")).status, 404);
  EXPECT_EQ(router.Handle(Get("/ui/..%2Findex.html")).status, 404);
}

TEST(Dashboard, WebRootServesFromDiskAndNeverLeavesIt) {
  const auto root = std::filesystem::temp_directory_path() / "perfwarden-dashboard-test";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "js");
  std::ofstream(root / "index.html") << "<p>dev</p>";
  std::ofstream(root / "js" / "app.js") << "export {};";
  std::ofstream(root / ".secret") << "no";
  http::Router router;
  RegisterDashboardRoutes(router, {root.string()});
  EXPECT_EQ(router.Handle(Get("/")).body, "<p>dev</p>");
  http::Response app = router.Handle(Get("/ui/js/app.js"));
  EXPECT_EQ(app.body, "export {};");
  EXPECT_EQ(router.Handle(Get("/ui/js/app.js", std::string(*app.headers.Get("ETag")))).status, 304);
  std::ofstream(root / "js" / "app.js") << "export const x = 1;";  // an edit: a new tag
  EXPECT_EQ(router.Handle(Get("/ui/js/app.js", std::string(*app.headers.Get("ETag")))).status, 200);
  EXPECT_EQ(router.Handle(Get("/ui/.secret")).status, 404);
  EXPECT_EQ(router.Handle(Get("/ui/js")).status, 404);  // a directory
  std::filesystem::remove_all(root);
}

TEST(Dashboard, SafePathsAndContentTypes) {
  EXPECT_TRUE(IsSafeAssetPath("js/app.js"));
  EXPECT_TRUE(IsSafeAssetPath("vendor/uplot/uPlot.min.css"));
  for (const char* bad : {"", "..", "../x", "a/../b", ".hidden", "a/.git/config", "/abs", "a//b",
                          "a/", "a b", "a\\b", "%2e"}) {
    EXPECT_FALSE(IsSafeAssetPath(bad)) << bad;
  }
  EXPECT_EQ(ContentTypeFor("a.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("x.png"), "image/png");
  EXPECT_EQ(ContentTypeFor("x.bin"), "application/octet-stream");
  EXPECT_EQ(ContentTypeFor(".js"), "application/octet-stream");
}

}  // namespace
}  // namespace perfwarden::server::web
