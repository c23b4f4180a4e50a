// SPDX-License-Identifier: Apache-2.0
// Waiting for a server's history worker in end-to-end tests: it analyses runs in the
// background, so a test that reads history, alerts or the history views waits for it first.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <pqxx/pqxx>
#include <string>
#include <thread>

namespace perfwarden::testing {

// Returns once every stored run of the database at `dsn` has been taken into history; a test
// failure after 60 s.
inline void WaitForHistory(const std::string& dsn) {
  pqxx::connection conn(dsn);
  for (int i = 0; i < 1200; ++i) {
    pqxx::nontransaction tx(conn);
    if (tx.exec("SELECT count(*) FROM runs WHERE history_analysed_at IS NULL")[0][0].as<int>() ==
        0) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL() << "history analysis did not finish within 60 s";
}

}  // namespace perfwarden::testing
