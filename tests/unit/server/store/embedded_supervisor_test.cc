// SPDX-License-Identifier: Apache-2.0
// What the supervisor tells clients about a failed start of the embedded PostgreSQL
// (SummarizeStartFailure): a few words from pg_ctl's output and postgres.log's tail, never the
// paths, host or port they hold.
#include "server/store/embedded_supervisor.h"

#include <gtest/gtest.h>

namespace perfwarden::store {
namespace {

TEST(SummarizeStartFailureTest, NamesTheCauseInAFewWordsWithoutPathsOrPorts) {
  struct Case {
    const char* output;
    const char* summary;
  };
  const Case cases[] = {
      {"2026-11-29 10:25:00 UTC [7821] PANIC:  could not write to file \"pg_wal/xlogtemp.7821\": "
       "No space left on device",
       "no space left on device"},
      {"ERROR:  could not extend file \"base/16384/17141\": No space left on device",
       "no space left on device"},
      {"LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use\nHINT: Is another "
       "postmaster already running on port 38337?",
       "its port is taken by another process"},
      {"FATAL:  pre-existing shared memory block (key 1234, ID 5) is still in use",
       "the old postmaster's processes still hold its shared memory"},
      {"FATAL:  lock file \"postmaster.pid\" already exists",
       "another postmaster holds the data directory's lock file"},
      {"FATAL:  could not open file \"/srv/pg/PG_VERSION\": Permission denied",
       "permission denied in its data directory"},
      {"LOG:  could not fork new process for connection: Cannot allocate memory",
       "out of memory or processes"},
      {"pg_ctl: could not start server\nExamine the log output.", "pg_ctl start failed"},
      {"", "pg_ctl start failed"},
  };
  for (const Case& c : cases) {
    const std::string summary = SummarizeStartFailure(c.output, "pg_ctl start failed");
    EXPECT_EQ(summary, c.summary) << c.output;
    EXPECT_EQ(summary.find("127.0.0.1"), std::string::npos);
    EXPECT_EQ(summary.find("38337"), std::string::npos);
  }
}

}  // namespace
}  // namespace perfwarden::store
