// SPDX-License-Identifier: Apache-2.0
// The runner's client side without a network: the spool (atomic writes, order, rejection, stale
// temp files, the lock), the uploader's URLs and local rejection by PushAll. net/'s retries and
// HTTP client have their own tests (tests/unit/net/).
#include "runner/client/spool.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "runner/client/uploader.h"
#include "tests/testing/no_jitter.h"

namespace perfwarden::client {
using net::HttpClient;
using testing::NoJitter;

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Ids(const std::vector<SpooledRun>& runs) {
  std::vector<std::string> ids;
  for (const SpooledRun& run : runs) ids.push_back(run.run_id);
  return ids;
}

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/perfwarden-spool-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    auto spool = Spool::Open(root_ / "a" / "spool");
    ASSERT_TRUE(spool.has_value()) << spool.error().ToString();
    spool_.emplace(std::move(*spool));
  }
  void TearDown() override { fs::remove_all(root_); }

  Spool& spool() { return *spool_; }
  fs::path root_;
  std::optional<Spool> spool_;
};

TEST_F(SpoolTest, OpenCreatesPrivateDirectory) {
  const fs::perms perms = fs::status(spool().dir()).permissions();
  EXPECT_EQ(perms & fs::perms::all, fs::perms::owner_all);
  std::ofstream(root_ / "file") << "x";
  EXPECT_FALSE(Spool::Open(root_ / "file").has_value());
}

TEST_F(SpoolTest, PutReadListRemove) {
  auto path = spool().Put("run-1", R"({"id":"run-1"})");
  ASSERT_TRUE(path.has_value()) << path.error().ToString();
  EXPECT_EQ(*path, (spool().dir() / "run-1.json").string());
  EXPECT_EQ(Slurp(*path), R"({"id":"run-1"})");
  EXPECT_EQ(fs::status(*path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(spool().Put("run-1", "second").has_value());  // replaces
  EXPECT_EQ(spool().Read("run-1").value(), "second");
  EXPECT_EQ(Ids(spool().List().value()), std::vector<std::string>{"run-1"});

  ASSERT_TRUE(spool().Remove("run-1").has_value());
  EXPECT_TRUE(spool().List().value().empty());
  EXPECT_EQ(spool().Remove("run-1").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(spool().Read("run-1").error().code, ErrorCode::kNotFound);
  // Nothing but the (now empty) queue is left: no temp file survives a Put.
  EXPECT_TRUE(fs::is_empty(spool().dir()));
}

TEST_F(SpoolTest, RejectsRunIdsThatAreNotSafeFileNames) {
  const std::vector<std::string> bad = {"",        "../escape", "a/b",
                                        ".hidden", "a b",       std::string(129, 'x')};
  for (const std::string& id : bad) {
    auto put = spool().Put(id, "{}");
    ASSERT_FALSE(put.has_value()) << id;
    EXPECT_EQ(put.error().code, ErrorCode::kInvalidArgument) << id;
    EXPECT_EQ(put.error().field, "run_id");
  }
  EXPECT_TRUE(fs::is_empty(spool().dir()));
  EXPECT_FALSE(fs::exists(root_ / "a" / "escape.json"));
  EXPECT_TRUE(spool().Put(std::string(128, 'x'), "{}").has_value());
}

TEST_F(SpoolTest, ListIsOldestFirstThenByName) {
  for (const char* id : {"c", "a", "b", "d"}) ASSERT_TRUE(spool().Put(id, "{}").has_value());
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(spool().dir() / "b.json", now - std::chrono::hours(2));
  fs::last_write_time(spool().dir() / "d.json", now - std::chrono::hours(1));
  fs::last_write_time(spool().dir() / "a.json", now);
  fs::last_write_time(spool().dir() / "c.json", now);
  EXPECT_EQ(Ids(spool().List().value()), (std::vector<std::string>{"b", "d", "a", "c"}));
}

TEST_F(SpoolTest, ListSkipsTempAndForeignFiles) {
  ASSERT_TRUE(spool().Put("good", "{}").has_value());
  std::ofstream(spool().dir() / ".tmp-half.json.1.0") << R"({"id":)";  // an interrupted Put
  std::ofstream(spool().dir() / "notes.txt") << "x";
  std::ofstream(spool().dir() / "bad name.json") << "{}";
  fs::create_directory(spool().dir() / "dir.json");
  ASSERT_TRUE(spool().Lock(milliseconds(0)).has_value());  // creates .lock
  ASSERT_TRUE(spool().Put("other", "{}").has_value());
  ASSERT_TRUE(spool().MarkRejected("other", "why").has_value());  // creates rejected/
  EXPECT_EQ(Ids(spool().List().value()), std::vector<std::string>{"good"});
}

// A reader racing a writer sees either the old or the new upload whole, never a prefix.
TEST_F(SpoolTest, ReadersNeverSeeAPartialUpload) {
  const std::string big_a(1 << 20, 'a');
  const std::string big_b(1 << 20, 'b');
  ASSERT_TRUE(spool().Put("run", big_a).has_value());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 40; ++i) EXPECT_TRUE(spool().Put("run", i % 2 ? big_a : big_b).has_value());
    done = true;
  });
  int reads = 0;
  bool whole = true;
  while (whole && (!done || reads == 0)) {  // List never shows the temp files
    auto runs = spool().List();
    EXPECT_EQ(runs ? Ids(*runs) : std::vector<std::string>{}, std::vector<std::string>{"run"});
    const std::string text = Slurp(spool().dir() / "run.json");
    whole = text == big_a || text == big_b;
    EXPECT_TRUE(whole) << "partial file of " << text.size() << " bytes";
    ++reads;
  }
  writer.join();
}

TEST_F(SpoolTest, MarkRejectedMovesTheUploadAndKeepsTheReason) {
  ASSERT_TRUE(spool().Put("bad", R"({"x":1})").has_value());
  ASSERT_TRUE(spool().Put("fine", "{}").has_value());
  ASSERT_TRUE(spool().MarkRejected("bad", "HTTP 400 INVALID_ARGUMENT (field: x)").has_value());
  EXPECT_EQ(Ids(spool().List().value()), std::vector<std::string>{"fine"});
  EXPECT_EQ(Ids(spool().ListRejected().value()), std::vector<std::string>{"bad"});
  EXPECT_EQ(Slurp(spool().dir() / "rejected" / "bad.json"), R"({"x":1})");
  EXPECT_EQ(Slurp(spool().dir() / "rejected" / "bad.error.txt"),
            "HTTP 400 INVALID_ARGUMENT (field: x)\n");
  EXPECT_EQ(fs::status(spool().dir() / "rejected").permissions() & fs::perms::all,
            fs::perms::owner_all);
  EXPECT_EQ(spool().MarkRejected("bad", "again").error().code, ErrorCode::kNotFound);
}

TEST_F(SpoolTest, StaleTempFilesAreCleaned) {
  const fs::path old_temp = spool().dir() / ".tmp-old.json.1.0";
  const fs::path young_temp = spool().dir() / ".tmp-young.json.1.1";
  std::ofstream(old_temp) << "{";
  std::ofstream(young_temp) << "{";
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(old_temp, now - std::chrono::minutes(61));
  fs::last_write_time(young_temp, now - std::chrono::minutes(59));
  ASSERT_TRUE(Spool::Open(spool().dir()).has_value());  // Open cleans too
  EXPECT_FALSE(fs::exists(old_temp));
  EXPECT_TRUE(fs::exists(young_temp));
  EXPECT_EQ(spool().CleanStaleTemp(std::chrono::seconds(3600)).value(), 0u);
  EXPECT_EQ(spool().CleanStaleTemp(std::chrono::seconds(60)).value(), 1u);
  EXPECT_FALSE(fs::exists(young_temp));
}

TEST_F(SpoolTest, LockExcludesASecondHolderUntilReleased) {
  auto other = Spool::Open(spool().dir());  // a second runner on the same spool
  ASSERT_TRUE(other.has_value());
  std::optional<SpoolLock> held;
  held.emplace(spool().Lock(milliseconds(0)).value());
  auto refused = other->Lock(milliseconds(60));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);

  // A waiting Lock gets the lock once the holder lets go within its timeout.
  std::thread releaser([&] {
    std::this_thread::sleep_for(milliseconds(100));
    held.reset();
  });
  auto waited = other->Lock(milliseconds(30'000));
  releaser.join();
  EXPECT_TRUE(waited.has_value()) << waited.error().ToString();
}

// --- URLs and local rejection ----------------------------------------------------------------

TEST(Uploader, RunsUrlAndPathSegments) {
  EXPECT_EQ(EscapePathSegment("my proj/ü~._-"), "my%20proj%2F%C3%BC~._-");
  EXPECT_EQ(RunsUrl("http://h:1//", "p q"), "http://h:1/api/v1/projects/p%20q/runs");
}

TEST_F(SpoolTest, PushAllRejectsUnreadableUploadsWithoutPosting) {
  ASSERT_TRUE(spool().Put("not-json", "{\"id\":").has_value());
  ASSERT_TRUE(spool().Put("no-project", R"({"id":"no-project"})").has_value());
  auto http = HttpClient::Create();
  ASSERT_TRUE(http.has_value());
  // Port 9 on a TEST-NET address: a post would fail; none is attempted for these uploads.
  auto report = PushAll(spool(), *http, "http://192.0.2.1:9", "token", NoJitter());
  ASSERT_TRUE(report.has_value()) << report.error().ToString();
  EXPECT_EQ(report->rejected, 2u);
  EXPECT_EQ(report->sent + report->already_present + report->remaining, 0u);
  std::vector<std::string> rejected = Ids(spool().ListRejected().value());
  std::sort(rejected.begin(), rejected.end());
  EXPECT_EQ(rejected, (std::vector<std::string>{"no-project", "not-json"}));
  EXPECT_NE(Slurp(spool().dir() / "rejected" / "not-json.error.txt").find("not valid JSON"),
            std::string::npos);

  // While another runner pushes, PushAll waits for the lock and then gives up.
  ASSERT_TRUE(spool().Put("later", "{").has_value());
  auto lock = spool().Lock(milliseconds(0));
  ASSERT_TRUE(lock.has_value());
  PushOptions options;
  options.lock_timeout = milliseconds(50);
  auto locked = PushAll(spool(), *http, "http://192.0.2.1:9", "token", NoJitter(), {}, options);
  ASSERT_FALSE(locked.has_value());
  EXPECT_EQ(locked.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(Ids(spool().List().value()), std::vector<std::string>{"later"});
}

}  // namespace
}  // namespace perfwarden::client
