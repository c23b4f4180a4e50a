-- 0007_history_analysis: what the history analysis of tracked branches keeps (issue 5).
-- A series is (branch, testbed name, benchmark, metric): a testbed's fingerprint may change
-- along it (the point records which fingerprint measured it, so that a step there is labelled
-- an environment change). Points are per commit, in the order their first run arrived, and
-- append-only: the incremental change-point state in history_series depends on that. The
-- tables 0001 created ahead of this (change_points, alerts, series_monitor_state) were never
-- written to; they are replaced by tables keyed on the series.
ALTER TABLE bisect_jobs DROP CONSTRAINT IF EXISTS bisect_jobs_alert_id_fkey;
DROP TABLE alerts;
DROP TABLE change_points;
DROP TABLE series_monitor_state;

ALTER TABLE tokens DROP CONSTRAINT IF EXISTS tokens_scopes_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_scopes_check
  CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['ingest', 'read', 'admin', 'triage']);

-- Runs not yet taken into history; the worker claims them oldest first (FOR UPDATE SKIP
-- LOCKED), so a crash between ingest and analysis loses nothing. Existing runs are backfilled.
ALTER TABLE runs ADD COLUMN history_analysed_at timestamptz;
CREATE INDEX runs_history_pending ON runs (created_at) WHERE history_analysed_at IS NULL;

CREATE TABLE history_series (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id     bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  branch_id      bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  testbed        text NOT NULL,
  benchmark_id   bigint NOT NULL REFERENCES benchmarks (id) ON DELETE CASCADE,
  metric_id      bigint NOT NULL REFERENCES metrics (id) ON DELETE CASCADE,
  length         integer NOT NULL DEFAULT 0 CHECK (length >= 0),
  -- The first position the detectors see: moves to an alert's first bad point when the alert
  -- is triaged (acknowledged, false_positive, resolved), which re-baselines the series, and
  -- forward when the series outgrows the analysis window (store::HistoryWindow).
  baseline_from  integer NOT NULL DEFAULT 0 CHECK (baseline_from >= 0),
  detector_state jsonb,  -- incremental e-divisive state; NULL: recompute from baseline_from
  monitor_state  jsonb NOT NULL DEFAULT '{}',  -- EWMA and CUSUM (stats/monitors.h)
  updated_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, branch_id, testbed, benchmark_id, metric_id)
);

CREATE TABLE history_points (
  series_id  bigint NOT NULL REFERENCES history_series (id) ON DELETE CASCADE,
  position   integer NOT NULL CHECK (position >= 0),
  commit_id  bigint NOT NULL REFERENCES commits (id) ON DELETE CASCADE,
  testbed_id bigint NOT NULL REFERENCES testbeds (id) ON DELETE CASCADE,  -- first run's
  run_ids    uuid[] NOT NULL,
  vals       float8[] NOT NULL CHECK (cardinality(vals) > 0),
  level      float8 NOT NULL,  -- median of vals
  PRIMARY KEY (series_id, position),
  UNIQUE (series_id, commit_id)
);

-- The steps the detectors currently see in a series (replaced on every analysis).
CREATE TABLE change_points (
  series_id    bigint NOT NULL REFERENCES history_series (id) ON DELETE CASCADE,
  position     integer NOT NULL CHECK (position > 0),
  magnitude    double precision NOT NULL,  -- level_after / level_before - 1
  p_value      double precision NOT NULL CHECK (p_value BETWEEN 0 AND 1),
  level_before double precision NOT NULL,
  level_after  double precision NOT NULL,
  detectors    text[] NOT NULL,
  detected_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (series_id, position)
);

CREATE TABLE alerts (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id          bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  series_id           bigint NOT NULL REFERENCES history_series (id) ON DELETE CASCADE,
  position            integer NOT NULL CHECK (position > 0),  -- the first bad point
  last_good_commit_id bigint NOT NULL REFERENCES commits (id) ON DELETE CASCADE,
  first_bad_commit_id bigint NOT NULL REFERENCES commits (id) ON DELETE CASCADE,
  last_good_run_id    uuid,
  first_bad_run_id    uuid,
  kind                text NOT NULL CHECK (kind IN ('regression', 'improvement')),
  cause               text NOT NULL CHECK (cause IN ('code', 'environment')),
  magnitude           double precision NOT NULL,
  ci_low              double precision,
  ci_high             double precision,
  p_value             double precision NOT NULL CHECK (p_value BETWEEN 0 AND 1),
  q_value             double precision NOT NULL CHECK (q_value BETWEEN 0 AND 1),
  level_before        double precision NOT NULL,
  level_after         double precision NOT NULL,
  detectors           text[] NOT NULL,
  environment_change  jsonb,
  parameters          jsonb NOT NULL DEFAULT '{}',
  state               text NOT NULL DEFAULT 'open'
                      CHECK (state IN ('open', 'acknowledged', 'false_positive', 'resolved')),
  note                text NOT NULL DEFAULT '',
  state_changed_by    text,
  state_changed_at    timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (series_id, position)
);
CREATE INDEX alerts_project_id ON alerts (project_id, id DESC);
CREATE INDEX alerts_project_state_id ON alerts (project_id, state, id DESC);

-- Every triage action, for the alert's history (who, when, what, why).
CREATE TABLE alert_events (
  alert_id bigint NOT NULL REFERENCES alerts (id) ON DELETE CASCADE,
  at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor    text NOT NULL,
  state    text NOT NULL,
  note     text NOT NULL DEFAULT ''
);
CREATE INDEX alert_events_alert ON alert_events (alert_id, at);

ALTER TABLE bisect_jobs ADD CONSTRAINT bisect_jobs_alert_id_fkey
  FOREIGN KEY (alert_id) REFERENCES alerts (id) ON DELETE SET NULL;
-- A finished bisect's whole answer (`perfwarden bisect --format json`), as the runner posted it.
ALTER TABLE bisect_jobs ADD COLUMN report jsonb;
CREATE INDEX bisect_jobs_alert ON bisect_jobs (alert_id) WHERE alert_id IS NOT NULL;
