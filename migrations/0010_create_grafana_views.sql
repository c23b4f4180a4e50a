-- 0010_create_grafana_views: read-only SQL views for dashboards (Grafana's PostgreSQL data
-- source, ad-hoc SQL), and a role that may read them and nothing else (issue 8, item 5;
-- docs/dashboards.md documents every column).
--
-- The views are a contract: their names, columns and meanings stay when the tables under them
-- change (a later migration that reshapes a table redefines the views over the new shape with
-- CREATE OR REPLACE VIEW; a column is only ever added, at the end). They expose names (project,
-- branch, testbed, suite, benchmark, metric, commit sha), never internal ids, so a query does
-- not need to know how the tables are keyed.
--
-- Why a schema of their own (perfwarden_views) and not v_* views in public:
-- - The embedded cluster grants its app role SELECT, INSERT, UPDATE, DELETE on ALL TABLES IN
--   SCHEMA public (EmbeddedPostgres::EnsureAppRole), and simple views are auto-updatable: in
--   public, the dashboard views would become writable paths for the app role. Here, the app
--   role gets nothing.
-- - The read role is given USAGE on this schema and SELECT on everything in it (and, through
--   default privileges, on views later migrations add here): its grant cannot reach a base
--   table or `tokens` by accident, and nothing has to be listed view by view.
-- - Grafana's query editor lists a schema's tables: this one holds the contract only. The
--   names (runs, alerts, verdicts...) read naturally, schema-qualified, without clashing with
--   the tables in public.
--
-- The views run with their owner's (the migrating role's) privileges on the tables under them
-- (no security_invoker), which is what lets a role with SELECT on the views only read them.
--
-- Time: every view has a `time` column (timestamptz) for Grafana's $__timeFilter and time
-- series panels. For a run and what it measured that is runs.created_at, when the server
-- stored the run: always set, in arrival order, and the time the API's series use
-- (GET .../series since/until); a run's own started_at/finished_at are optional, client-sent.

CREATE SCHEMA perfwarden_views;
COMMENT ON SCHEMA perfwarden_views IS
  'perfwarden: read-only views for dashboards (a stable contract, docs/dashboards.md)';

-- Lookups for dashboard variables: small tables, cheap to list.
CREATE VIEW perfwarden_views.projects AS
SELECT p.name AS project, p.public_read, p.created_at
FROM public.projects p;

CREATE VIEW perfwarden_views.branches AS
SELECT p.name AS project, b.name AS branch, b.created_at
FROM public.branches b JOIN public.projects p ON p.id = b.project_id;

-- One row per (name, fingerprint): a testbed name whose host changed has several rows.
CREATE VIEW perfwarden_views.testbeds AS
SELECT p.name AS project, t.name AS testbed, t.fingerprint, t.fingerprint_hash,
       t.created_at, t.last_seen_at
FROM public.testbeds t JOIN public.projects p ON p.id = t.project_id;

CREATE VIEW perfwarden_views.benchmarks AS
SELECT p.name AS project, b.suite, b.name AS benchmark, b.labels, b.created_at
FROM public.benchmarks b JOIN public.projects p ON p.id = b.project_id;

CREATE VIEW perfwarden_views.metrics AS
SELECT p.name AS project, m.name AS metric, m.unit, m.direction, m.created_at
FROM public.metrics m JOIN public.projects p ON p.id = m.project_id;

-- One row per stored run. commit_time is the commit's author time as the runner sent it.
CREATE VIEW perfwarden_views.runs AS
SELECT r.created_at AS time,
       r.id AS run_id,
       p.name AS project,
       br.name AS branch,
       c.sha AS commit_sha,
       c.author_time AS commit_time,
       c.subject AS commit_subject,
       c.author AS commit_author,
       t.name AS testbed,
       r.pr,
       r.target_branch,
       r.merge_base_sha,
       r.ci ->> 'provider' AS ci_provider,
       r.ci ->> 'job_url' AS ci_job_url,
       r.status,
       r.started_at,
       r.finished_at,
       r.created_at,
       r.sample_count
FROM public.runs r
JOIN public.projects p ON p.id = r.project_id
JOIN public.branches br ON br.id = r.branch_id
JOIN public.commits c ON c.id = r.commit_id
JOIN public.testbeds t ON t.id = r.testbed_id;

-- One row per (run, benchmark, metric): what a time series panel plots, value = the median of
-- the run's repetitions. The statistics are computed here from the packed repetitions (0004),
-- as perfwarden computes them: median = mean of the two middle values for an even count
-- (percentile_cont), cv = sample standard deviation / |mean| (NULL below 2 repetitions or at
-- mean 0). Filter on the name columns: they reach the sample_sets_series index, and only the
-- rows that pass are summarised.
CREATE VIEW perfwarden_views.series_points AS
SELECT r.created_at AS time,
       r.id AS run_id,
       p.name AS project,
       br.name AS branch,
       t.name AS testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       c.sha AS commit_sha,
       c.author_time AS commit_time,
       r.pr,
       st.median AS value,
       st.median,
       st.mean,
       st.min,
       st.max,
       st.stddev,
       st.stddev / nullif(abs(st.mean), 0) AS cv,
       cardinality(s.vals) AS n,
       s.vals AS repetitions
FROM public.sample_sets s
JOIN public.runs r ON r.id = s.run_id
JOIN public.projects p ON p.id = r.project_id
JOIN public.branches br ON br.id = r.branch_id
JOIN public.testbeds t ON t.id = r.testbed_id
JOIN public.commits c ON c.id = r.commit_id
JOIN public.benchmarks b ON b.id = s.benchmark_id
JOIN public.metrics m ON m.id = s.metric_id
CROSS JOIN LATERAL (
  SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY u.v) AS median,
         avg(u.v) AS mean, min(u.v) AS min, max(u.v) AS max, stddev_samp(u.v) AS stddev
  FROM unnest(s.vals) AS u(v)
) st;

-- One row per repetition (scatter plots, pooled statistics over several runs). repetition is
-- 0-based, as in the API.
CREATE VIEW perfwarden_views.repetitions AS
SELECT r.created_at AS time,
       r.id AS run_id,
       p.name AS project,
       br.name AS branch,
       t.name AS testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       c.sha AS commit_sha,
       r.pr,
       (u.ord - 1)::integer AS repetition,
       u.value
FROM public.sample_sets s
JOIN public.runs r ON r.id = s.run_id
JOIN public.projects p ON p.id = r.project_id
JOIN public.branches br ON br.id = r.branch_id
JOIN public.testbeds t ON t.id = r.testbed_id
JOIN public.commits c ON c.id = r.commit_id
JOIN public.benchmarks b ON b.id = s.benchmark_id
JOIN public.metrics m ON m.id = s.metric_id
CROSS JOIN LATERAL unnest(s.vals) WITH ORDINALITY AS u(value, ord);

-- The history of tracked branches (history.branches) as the history analysis sees it: one
-- point per commit in arrival order, value = the median of every repetition of the commit's
-- runs pooled (history_points.level). time is the arrival of the commit's first run.
CREATE VIEW perfwarden_views.history AS
SELECT fr.created_at AS time,
       p.name AS project,
       br.name AS branch,
       hs.testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       hp.position,
       c.sha AS commit_sha,
       c.author_time AS commit_time,
       c.subject AS commit_subject,
       hp.level AS value,
       cardinality(hp.vals) AS n,
       cardinality(hp.run_ids) AS run_count,
       hp.run_ids[1] AS first_run_id
FROM public.history_points hp
JOIN public.history_series hs ON hs.id = hp.series_id
JOIN public.projects p ON p.id = hs.project_id
JOIN public.branches br ON br.id = hs.branch_id
JOIN public.benchmarks b ON b.id = hs.benchmark_id
JOIN public.metrics m ON m.id = hs.metric_id
JOIN public.commits c ON c.id = hp.commit_id
LEFT JOIN public.runs fr ON fr.id = hp.run_ids[1];

-- The steps the detectors currently see (replaced by every analysis of the series): between
-- point position - 1 (last_good_sha) and point position (first_bad_sha).
CREATE VIEW perfwarden_views.change_points AS
SELECT fr.created_at AS time,
       p.name AS project,
       br.name AS branch,
       hs.testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       cp.position,
       gc.sha AS last_good_sha,
       bc.sha AS first_bad_sha,
       cp.magnitude,
       cp.p_value,
       cp.level_before,
       cp.level_after,
       cp.detectors,
       cp.detected_at
FROM public.change_points cp
JOIN public.history_series hs ON hs.id = cp.series_id
JOIN public.projects p ON p.id = hs.project_id
JOIN public.branches br ON br.id = hs.branch_id
JOIN public.benchmarks b ON b.id = hs.benchmark_id
JOIN public.metrics m ON m.id = hs.metric_id
JOIN public.history_points bad ON bad.series_id = cp.series_id AND bad.position = cp.position
JOIN public.commits bc ON bc.id = bad.commit_id
LEFT JOIN public.history_points good
  ON good.series_id = cp.series_id AND good.position = cp.position - 1
LEFT JOIN public.commits gc ON gc.id = good.commit_id
LEFT JOIN public.runs fr ON fr.id = bad.run_ids[1];

-- Alerts of the history analysis and their triage. time is the arrival of the first bad
-- commit's run (where the step is on a series' time axis: annotations), created_at when the
-- alert was raised. triaged: someone set a state other than open.
CREATE VIEW perfwarden_views.alerts AS
SELECT coalesce(fr.created_at, a.created_at) AS time,
       a.id AS alert_id,
       p.name AS project,
       br.name AS branch,
       hs.testbed,
       b.suite,
       b.name AS benchmark,
       m.name AS metric,
       m.unit,
       m.direction,
       a.state,
       a.state <> 'open' AS triaged,
       a.kind,
       a.cause,
       a.magnitude,
       a.ci_low,
       a.ci_high,
       a.p_value,
       a.q_value,
       a.level_before,
       a.level_after,
       a.detectors,
       a.position,
       gc.sha AS last_good_sha,
       bc.sha AS first_bad_sha,
       bc.subject AS first_bad_subject,
       a.last_good_run_id,
       a.first_bad_run_id,
       a.note,
       a.state_changed_by,
       a.state_changed_at,
       a.created_at
FROM public.alerts a
JOIN public.history_series hs ON hs.id = a.series_id
JOIN public.projects p ON p.id = a.project_id
JOIN public.branches br ON br.id = hs.branch_id
JOIN public.benchmarks b ON b.id = hs.benchmark_id
JOIN public.metrics m ON m.id = hs.metric_id
JOIN public.commits gc ON gc.id = a.last_good_commit_id
JOIN public.commits bc ON bc.id = a.first_bad_commit_id
LEFT JOIN public.runs fr ON fr.id = a.first_bad_run_id;

-- Pull-request verdicts, one row per stored verdict (a run re-gated against new baselines has
-- several; latest marks the one the API returns). The counts are the summary's; verdicts
-- stored before 0005 have none (NULL). The per-benchmark results (~200 KB each) stay out.
CREATE VIEW perfwarden_views.verdicts AS
SELECT v.created_at AS time,
       v.id AS verdict_id,
       v.run_id,
       p.name AS project,
       br.name AS branch,
       t.name AS testbed,
       c.sha AS commit_sha,
       r.pr,
       r.target_branch,
       v.outcome,
       NOT EXISTS (SELECT 1 FROM public.verdicts n
                   WHERE n.run_id = v.run_id
                     AND (n.created_at, n.id) > (v.created_at, v.id)) AS latest,
       (v.summary -> 'counts' ->> 'regression')::integer AS regressions,
       (v.summary -> 'counts' ->> 'improvement')::integer AS improvements,
       (v.summary -> 'counts' ->> 'equivalent')::integer AS equivalent,
       (v.summary -> 'counts' ->> 'inconclusive')::integer AS inconclusive,
       (v.summary -> 'counts' ->> 'ignored')::integer AS ignored,
       (v.summary -> 'counts' ->> 'new')::integer AS new_series,
       v.baseline ->> 'commit' AS baseline_commit_sha,
       v.baseline ->> 'branch' AS baseline_branch,
       v.baseline ->> 'selection' AS baseline_selection,
       v.algorithm_version,
       v.created_at
FROM public.verdicts v
JOIN public.runs r ON r.id = v.run_id
JOIN public.projects p ON p.id = r.project_id
JOIN public.branches br ON br.id = r.branch_id
JOIN public.testbeds t ON t.id = r.testbed_id
JOIN public.commits c ON c.id = r.commit_id;

-- The read-only role. Roles belong to the cluster, not the database, so:
-- - it may exist already (another database of the cluster, or an operator made it first):
--   then only the grants below run;
-- - creating it needs CREATEROLE, which a least-privilege owner (docs/operations.md) lacks:
--   then this block creates and grants nothing and says so in a NOTICE, and the migration
--   still succeeds; the operator runs the commands in docs/dashboards.md ("The read role").
--   Had the operator created the role before migrating, the grants below are made here.
-- NOLOGIN: people and Grafana log in as their own users that are members of it.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'perfwarden_grafana_read') THEN
    IF NOT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
      RAISE NOTICE 'perfwarden: role % may not create roles, so perfwarden_grafana_read was not '
                   'created; create it and grant it the views as docs/dashboards.md shows',
                   current_user;
      RETURN;
    END IF;
    BEGIN
      CREATE ROLE perfwarden_grafana_read NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE
        NOREPLICATION NOBYPASSRLS;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL;  -- another database of the cluster was migrated at the same moment
    END;
  END IF;
  GRANT USAGE ON SCHEMA perfwarden_views TO perfwarden_grafana_read;
  GRANT SELECT ON ALL TABLES IN SCHEMA perfwarden_views TO perfwarden_grafana_read;
  -- Views that later migrations (run by this same role) add to the schema are readable too.
  ALTER DEFAULT PRIVILEGES IN SCHEMA perfwarden_views GRANT SELECT ON TABLES TO perfwarden_grafana_read;
  -- PUBLIC may connect to a new database by default; a hardened cluster revokes that, and the
  -- role needs CONNECT then. Only the database's owner (or a superuser) can grant it.
  IF has_database_privilege(current_database(), 'CONNECT WITH GRANT OPTION') THEN
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO perfwarden_grafana_read', current_database());
  END IF;
END
$$;
