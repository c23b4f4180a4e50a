// The runner's client side without a network: the spool (atomic writes, order, rejection, stale
// temp files, the lock), the retry schedule on a fake clock (growth, cap, Retry-After, which
// statuses retry, max attempts, seeded jitter), URL helpers and local rejection by PushAll.
#include "runner/client/spool.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/retry.h"
#include "runner/client/uploader.h"

namespace perfgate::client {
// The HTTP client and its retries are net/'s.
using net::Backoff;
using net::CallWithRetry;
using net::DefaultUserAgent;
using net::HttpClient;
using net::HttpRequest;
using net::HttpResponse;
using net::IsRetryableStatus;
using net::ParseRetryAfter;
using net::RedactUrl;
using net::RetryContext;
using net::RetryNotice;
using net::RetryPolicy;

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
    char pattern[] = "/tmp/perfgate-spool-XXXXXX";
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

// --- Retry ---------------------------------------------------------------------------------

TEST(Retry, RetryableStatuses) {
  for (int status : {408, 429, 500, 502, 503, 504}) EXPECT_TRUE(IsRetryableStatus(status));
  for (int status : {200, 201, 301, 400, 401, 403, 404, 409, 413, 422, 501, 505}) {
    EXPECT_FALSE(IsRetryableStatus(status)) << status;
  }
}

TEST(Retry, ParseRetryAfter) {
  EXPECT_EQ(ParseRetryAfter("120"), milliseconds(120'000));
  EXPECT_EQ(ParseRetryAfter(" 3 "), milliseconds(3'000));
  EXPECT_EQ(ParseRetryAfter("0"), milliseconds(0));
  for (const char* bad : {"", " ", "-1", "1.5", "3s", "Wed, 21 Oct 2015 07:28:00 GMT"}) {
    EXPECT_EQ(ParseRetryAfter(bad), std::nullopt) << bad;
  }
  EXPECT_GT(ParseRetryAfter("99999999999999999999").value(), milliseconds(0));  // saturates
}

TEST(Retry, BackoffWithoutJitterGrowsAndIsCapped) {
  RetryPolicy policy;
  policy.jitter = false;
  Backoff backoff(policy, 1);
  std::vector<int64_t> delays;
  for (int i = 0; i < 9; ++i) delays.push_back(backoff.Next().count());
  EXPECT_EQ(delays,
            (std::vector<int64_t>{500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000}));
  EXPECT_EQ(backoff.Next(milliseconds(7000)), milliseconds(7000));
  EXPECT_EQ(backoff.Next(milliseconds(100'000)), milliseconds(30'000));
}

TEST(Retry, JitterIsSeededUniformAndWithinTheEnvelope) {
  RetryPolicy policy;  // jitter on
  const auto draw = [&](uint64_t seed) {
    Backoff backoff(policy, seed);
    std::vector<int64_t> delays;
    for (int i = 0; i < 8; ++i) delays.push_back(backoff.Next().count());
    return delays;
  };
  EXPECT_EQ(draw(42), draw(42));
  EXPECT_NE(draw(42), draw(43));
  const std::vector<int64_t> envelope = {500, 1000, 2000, 4000, 8000, 16000, 30000, 30000};
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const auto delays = draw(seed);
    for (size_t i = 0; i < delays.size(); ++i) {
      EXPECT_GE(delays[i], 0);
      EXPECT_LE(delays[i], envelope[i]) << "seed " << seed << " step " << i;
    }
  }
  // Full jitter: uniform over [0, envelope], so the mean is near half of it.
  policy.factor = 1;
  policy.initial = milliseconds(1000);
  Backoff flat(policy, 7);
  double sum = 0;
  for (int i = 0; i < 4000; ++i) sum += static_cast<double>(flat.Next().count());
  EXPECT_NEAR(sum / 4000, 500, 25);
}

// A scripted server: each call returns the next outcome; the fake sleeper records the waits.
struct Script {
  explicit Script(std::vector<Result<HttpResponse>> script) : outcomes(std::move(script)) {}

  std::vector<Result<HttpResponse>> outcomes;
  size_t calls = 0;
  std::vector<int64_t> slept;

  std::function<Result<HttpResponse>()> Fn() {
    return [this] { return outcomes.at(calls++); };
  }
  RetryContext Context() {
    RetryContext context;
    context.sleep = [this](milliseconds delay) { slept.push_back(delay.count()); };
    context.seed = 1;
    return context;
  }
};

HttpResponse Status(int status, std::string retry_after = "") {
  HttpResponse response;
  response.status = status;
  if (!retry_after.empty()) response.headers["retry-after"] = retry_after;
  return response;
}

RetryPolicy NoJitter() {
  RetryPolicy policy;
  policy.jitter = false;
  return policy;
}

TEST(Retry, RetriesUntilASuccess) {
  Script script{{Status(503), MakeError(ErrorCode::kUnavailable, "refused"), Status(201)}};
  std::vector<RetryNotice> notices;
  RetryContext context = script.Context();
  context.on_retry = [&](const RetryNotice& notice) { notices.push_back(notice); };
  auto result = CallWithRetry(NoJitter(), script.Fn(), context);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, 201);
  EXPECT_EQ(script.calls, 3u);
  EXPECT_EQ(script.slept, (std::vector<int64_t>{500, 1000}));
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[0].attempt, 1);
  EXPECT_EQ(notices[0].reason, "HTTP 503");
  EXPECT_EQ(notices[1].reason, "refused");
  EXPECT_EQ(notices[1].delay, milliseconds(1000));
}

TEST(Retry, HonoursRetryAfterCappedAtMaxDelay) {
  Script script{{Status(429, "7"), Status(503, "3600"), Status(503, "soon"), Status(200)}};
  auto result = CallWithRetry(NoJitter(), script.Fn(), script.Context());
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status, 200);
  // An unparsable Retry-After falls back to the schedule (third step: 2000 ms).
  EXPECT_EQ(script.slept, (std::vector<int64_t>{7000, 30000, 2000}));
}

TEST(Retry, NeverRetriesOtherClientErrors) {
  for (int status : {400, 401, 403, 404, 409, 413}) {
    Script script{{Status(status), Status(201)}};
    auto result = CallWithRetry(NoJitter(), script.Fn(), script.Context());
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->status, status);
    EXPECT_EQ(script.calls, 1u) << status;
    EXPECT_TRUE(script.slept.empty());
  }
  Script bad_url{{InvalidArgument("malformed", "url"), Status(201)}};
  auto result = CallWithRetry(NoJitter(), bad_url.Fn(), bad_url.Context());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad_url.calls, 1u);
}

TEST(Retry, StopsAtMaxAttemptsWithTheLastOutcome) {
  Script busy{std::vector<Result<HttpResponse>>(9, Status(503))};
  auto last = CallWithRetry(NoJitter(), busy.Fn(), busy.Context());
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->status, 503);
  EXPECT_EQ(busy.calls, 5u);
  EXPECT_EQ(busy.slept, (std::vector<int64_t>{500, 1000, 2000, 4000}));

  Script down{std::vector<Result<HttpResponse>>(9, MakeError(ErrorCode::kUnavailable, "down"))};
  RetryPolicy three = NoJitter();
  three.max_attempts = 3;
  auto error = CallWithRetry(three, down.Fn(), down.Context());
  EXPECT_EQ(error.error().message, "down");
  EXPECT_EQ(down.calls, 3u);

  Script once{std::vector<Result<HttpResponse>>(2, Status(503))};
  RetryPolicy zero = NoJitter();
  zero.max_attempts = 0;  // means one attempt
  EXPECT_EQ(CallWithRetry(zero, once.Fn(), once.Context())->status, 503);
  EXPECT_EQ(once.calls, 1u);
}

// --- HTTP helpers and local rejection -------------------------------------------------------

TEST(HttpClient, UrlsAndEscaping) {
  EXPECT_EQ(RedactUrl("https://user:secret@host:8443/p?q=a@b"), "https://host:8443/p?q=a@b");
  EXPECT_EQ(RedactUrl("http://host/a@b"), "http://host/a@b");
  EXPECT_EQ(EscapePathSegment("my proj/ü~._-"), "my%20proj%2F%C3%BC~._-");
  EXPECT_EQ(RunsUrl("http://h:1//", "p q"), "http://h:1/api/v1/projects/p%20q/runs");
  EXPECT_EQ(DefaultUserAgent().rfind("perfgate/", 0), 0u);
  EXPECT_GT(DefaultUserAgent().size(), std::string("perfgate/").size());
}

TEST(HttpClient, SchemesOtherThanHttpAreRejectedWithoutSecrets) {
  auto http = HttpClient::Create();
  ASSERT_TRUE(http.has_value()) << http.error().ToString();
  HttpRequest request;
  request.url = "ftp://user:secret-password@127.0.0.1/x";
  request.bearer_token = "pgt_secret-token";
  auto response = http->Send(request);
  ASSERT_FALSE(response.has_value());
  EXPECT_EQ(response.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(response.error().field, "url");
  EXPECT_EQ(response.error().message.find("secret"), std::string::npos) << response.error().message;
  EXPECT_NE(response.error().message.find("ftp://127.0.0.1/x"), std::string::npos);
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
}  // namespace perfgate::client
