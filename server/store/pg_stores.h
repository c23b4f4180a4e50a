// SPDX-License-Identifier: Apache-2.0
// PgStore: the PostgreSQL implementation of the store interfaces (store.h) over a
// ConnectionPool. Every value is a bound parameter; every call is one transaction, so a failed
// ingest leaves nothing behind. libpqxx stays inside server/store.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/store/bisect_store.h"
#include "server/store/history_store.h"
#include "server/store/pool.h"
#include "server/store/store.h"

namespace perfwarden::store {

class PgStore final : public ProjectStore,
                      public TokenStore,
                      public RunStore,
                      public SeriesStore,
                      public VerdictStore,
                      public HistoryStore,
                      public BisectStore {
 public:
  explicit PgStore(ConnectionPool& pool) : pool_(pool) {}

  // ProjectStore
  Result<Project> CreateProject(
      const std::string& name, bool public_read,
      const std::optional<std::vector<std::string>>& protected_branches = std::nullopt) override;
  Result<Project> UpdateProject(const std::string& name, const ProjectUpdate& update) override;
  Result<std::vector<Project>> ListProjects() override;
  Result<Project> GetProject(const std::string& name) override;

  // TokenStore. FindTokenByHash refreshes last_used_at at most once a minute per token, so
  // that a busy CI token does not turn every authenticated request into a row update.
  Result<TokenRecord> CreateToken(const NewToken& token) override;
  Result<TokenRecord> FindTokenByHash(const std::string& token_hash) override;
  Result<std::vector<TokenRecord>> ListTokens(std::optional<int64_t> project_id) override;
  Result<bool> RevokeToken(int64_t id) override;
  Result<bool> HasAdminToken() override;

  // RunStore
  Result<IngestOutcome> IngestRun(const Project& project, const wire::RunUpload& run) override;
  Result<RunPage> ListRuns(const Project& project, const RunFilter& filter) override;
  Result<StoredRun> GetRun(const Project& project, const std::string& run_id) override;

  // SeriesStore
  Result<std::vector<BenchmarkInfo>> ListBenchmarks(const Project& project) override;
  Result<std::vector<MetricInfo>> ListMetrics(const Project& project) override;
  Result<std::vector<NamedRuns>> ListBranches(const Project& project) override;
  Result<std::vector<NamedRuns>> ListTestbeds(const Project& project) override;
  Result<Series> GetSeries(const Project& project, const SeriesQuery& query) override;

  // VerdictStore (pg_verdict_store.cc)
  Result<RunContext> GetRunContext(const Project& project, const std::string& run_id) override;
  Result<std::optional<BaselineChoice>> FindBaseline(const Project& project, const RunContext& run,
                                                     std::string* why_none) override;
  Result<std::vector<SampleSet>> GetSampleSets(const Project& project,
                                               const std::vector<std::string>& run_ids) override;
  Result<StoredVerdict> SaveVerdict(const Project& project, const NewVerdict& verdict) override;
  Result<std::optional<StoredVerdict>> LatestVerdict(const Project& project,
                                                     const std::string& run_id) override;
  Result<std::optional<StoredVerdict>> GetVerdict(const Project& project, const std::string& run_id,
                                                  int64_t id) override;

  // HistoryStore (pg_history_store.cc)
  Result<std::unique_ptr<HistoryRunTransaction>> BeginNextRun(
      const std::vector<std::string>& tracked_branches) override;
  Result<int64_t> PendingHistoryRuns() override;
  Result<std::optional<std::string>> SkipNextRun(const std::vector<std::string>& tracked_branches,
                                                 const std::string& error) override;
  // The analysis window of BeginNextRun (default HistoryWindow{}).
  void SetHistoryWindow(const HistoryWindow& window) { history_window_ = window; }
  Result<AlertPage> ListAlerts(const Project& project, const AlertFilter& filter) override;
  Result<std::vector<AlertCount>> CountAlerts(const Project& project,
                                              const AlertFilter& filter) override;
  Result<AlertDetail> GetAlert(const Project& project, int64_t id, int excerpt_points) override;
  Result<AlertRecord> UpdateAlert(const Project& project, int64_t id,
                                  const AlertUpdate& update) override;
  // pg_alert_groups.cc
  Result<AlertGroupPage> ListAlertGroups(const Project& project,
                                         const AlertGroupFilter& filter) override;
  Result<AlertGroupDetail> GetAlertGroup(const Project& project, int64_t id) override;
  Result<AlertGroupDetail> UpdateAlertGroup(const Project& project, int64_t id,
                                            const AlertUpdate& update) override;
  Result<BisectRecord> SaveBisect(const Project& project, const NewBisect& bisect) override;
  Result<BisectRecord> GetBisect(const Project& project, int64_t id) override;  // pg_bisect_store
  Result<HistorySeriesPoints> GetHistorySeries(const Project& project,
                                               const HistorySeriesQuery& query) override;

  // BisectStore (pg_bisect_store.cc)
  Result<BisectRecord> QueueRemoteBisect(const Project& project, const NewRemoteBisect& bisect,
                                         const BisectReplay& replay) override;
  Result<std::optional<ClaimedStep>> ClaimStep(const Project& project,
                                               const StepClaimRequest& claim) override;
  Result<StepLease> HeartbeatStep(const Project& project, int64_t step_id,
                                  const std::string& token_hash, int64_t lease_seconds) override;
  Result<BisectRecord> CompleteStep(const Project& project, int64_t step_id,
                                    const std::string& token_hash, const StepReport& report,
                                    const BisectReplay& replay) override;
  Result<BisectRecord> CancelBisect(const Project& project, int64_t id) override;

 private:
  ConnectionPool& pool_;
  HistoryWindow history_window_;
};

}  // namespace perfwarden::store
