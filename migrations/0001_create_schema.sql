-- 0001_create_schema: the perfwarden data model (../shared/DESIGN.md, "Data model").
-- Forward-only: never edit this file once released (the migrator refuses a changed checksum);
-- change the schema in a new NNNN_verb_object.sql. The migrator runs each file in one
-- transaction, so a file must not contain BEGIN/COMMIT or CREATE INDEX CONCURRENTLY.
--
-- Conventions: internal ids are bigint identities; runs keep the client's UUID (the upload's
-- idempotency key); times are timestamptz; enumerations are text with a CHECK so that a new
-- value is a one-line migration; "series" means (branch, testbed, benchmark, metric).

CREATE TABLE projects (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        text NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 128),
  public_read boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Bearer tokens. Only the SHA-256 (lowercase hex) of a token is stored; the token itself is
-- shown once. project_id NULL: not bound to one project (the admin token).
CREATE TABLE tokens (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id   bigint REFERENCES projects (id) ON DELETE CASCADE,
  name         text NOT NULL DEFAULT '',
  prefix       text NOT NULL DEFAULT '',  -- the first characters, to recognise a token in lists
  token_hash   text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
  scopes       text[] NOT NULL
               CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['ingest', 'read', 'admin']),
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
CREATE INDEX tokens_project ON tokens (project_id);

-- A testbed row is one (name, fingerprint): when a host's CPU, kernel, compiler, GPU driver...
-- change, its runs land on a new row, so a series never silently mixes hardware.
-- fingerprint_hash is derived by PostgreSQL (jsonb text is canonical: keys sorted, no
-- duplicates), so every writer agrees on it and ON CONFLICT can use it.
CREATE TABLE testbeds (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id       bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name             text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 256),
  fingerprint      jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(fingerprint) = 'object'),
  fingerprint_hash text NOT NULL GENERATED ALWAYS AS (md5(fingerprint::text)) STORED,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_seen_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name, fingerprint_hash)
);

CREATE TABLE branches (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 256),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

CREATE TABLE commits (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id  bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  sha         text NOT NULL CHECK (sha ~ '^[0-9a-f]{40}$'),
  parents     text[] NOT NULL DEFAULT '{}',
  author      text NOT NULL DEFAULT '',
  author_time timestamptz,
  subject     text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, sha)
);

-- One uploaded run. upload is the canonical upload JSON (what GET returns and what an
-- idempotent re-post is compared with).
CREATE TABLE runs (
  id             uuid PRIMARY KEY,
  project_id     bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  branch_id      bigint NOT NULL REFERENCES branches (id),
  commit_id      bigint NOT NULL REFERENCES commits (id),
  testbed_id     bigint NOT NULL REFERENCES testbeds (id),
  merge_base_sha text CHECK (merge_base_sha ~ '^[0-9a-f]{40}$'),
  target_branch  text NOT NULL DEFAULT '',
  ci             jsonb NOT NULL DEFAULT '{}',
  pr             bigint CHECK (pr > 0),
  started_at     timestamptz,
  finished_at    timestamptz,
  status         text NOT NULL DEFAULT 'completed'
                 CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
  upload         jsonb NOT NULL,
  sample_count   bigint NOT NULL DEFAULT 0 CHECK (sample_count >= 0),
  created_at     timestamptz NOT NULL DEFAULT now(),
  CHECK (finished_at IS NULL OR started_at IS NULL OR finished_at >= started_at)
);
CREATE INDEX runs_project_branch_created ON runs (project_id, branch_id, created_at DESC);
CREATE INDEX runs_branch_testbed_created ON runs (branch_id, testbed_id, created_at DESC);
CREATE INDEX runs_commit ON runs (commit_id);
CREATE INDEX runs_testbed ON runs (testbed_id);
CREATE INDEX runs_project_pr ON runs (project_id, pr) WHERE pr IS NOT NULL;

CREATE TABLE benchmarks (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  suite      text NOT NULL,
  name       text NOT NULL CHECK (char_length(name) >= 1),
  labels     jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(labels) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, suite, name)
);

-- A metric is (name, unit) within a project: Google Benchmark reports real_time in ns for one
-- benchmark and in ms for another, and values of different units must not share a series.
CREATE TABLE metrics (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  name       text NOT NULL CHECK (char_length(name) >= 1),
  unit       text NOT NULL DEFAULT '',
  direction  text NOT NULL CHECK (direction IN ('lower', 'higher')),
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name, unit)
);

-- Every repetition of every benchmark metric of a run. No surrogate key: this is the big
-- table and it is written with COPY. In PostgreSQL NaN sorts above Infinity, so the CHECK
-- keeps NaN and both infinities out.
CREATE TABLE samples (
  run_id       uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  benchmark_id bigint NOT NULL REFERENCES benchmarks (id),
  metric_id    bigint NOT NULL REFERENCES metrics (id),
  repetition   integer NOT NULL CHECK (repetition >= 0),
  value        double precision NOT NULL
               CHECK (value > '-Infinity'::float8 AND value < 'Infinity'::float8),
  PRIMARY KEY (run_id, benchmark_id, metric_id, repetition)
);
-- Series queries: a benchmark metric's samples, joined to runs filtered by branch/testbed.
CREATE INDEX samples_series ON samples (benchmark_id, metric_id, run_id) INCLUDE (value);

-- A PR verdict, replayable: which baseline runs, which algorithm version, which parameters.
-- A run may get several verdicts (recomputed with new baselines); the newest wins.
CREATE TABLE verdicts (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id            uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  baseline_run_ids  uuid[] NOT NULL DEFAULT '{}',
  outcome           text NOT NULL
                    CHECK (outcome IN ('pass', 'regression', 'improvement', 'inconclusive',
                                       'no_baseline')),
  results           jsonb NOT NULL DEFAULT '[]',
  algorithm_version text NOT NULL,
  parameters        jsonb NOT NULL DEFAULT '{}',
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX verdicts_run_created ON verdicts (run_id, created_at DESC);

-- A detected shift in a main-branch series, between two commits (last good, first bad).
CREATE TABLE change_points (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id          bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  branch_id           bigint NOT NULL REFERENCES branches (id),
  testbed_id          bigint NOT NULL REFERENCES testbeds (id),
  benchmark_id        bigint NOT NULL REFERENCES benchmarks (id),
  metric_id           bigint NOT NULL REFERENCES metrics (id),
  last_good_commit_id bigint REFERENCES commits (id),
  first_bad_commit_id bigint NOT NULL REFERENCES commits (id),
  first_bad_run_id    uuid REFERENCES runs (id) ON DELETE SET NULL,
  magnitude           double precision NOT NULL,  -- relative change of the median, +0.07 = +7%
  p_value             double precision CHECK (p_value BETWEEN 0 AND 1),
  detector            text NOT NULL
                      CHECK (detector IN ('edivisive', 'ewma', 'cusum', 'page_hinkley')),
  parameters          jsonb NOT NULL DEFAULT '{}',
  detected_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX change_points_series
  ON change_points (branch_id, testbed_id, benchmark_id, metric_id, detected_at DESC);

CREATE TABLE alerts (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id          bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  change_point_id     bigint REFERENCES change_points (id) ON DELETE SET NULL,
  branch_id           bigint NOT NULL REFERENCES branches (id),
  testbed_id          bigint NOT NULL REFERENCES testbeds (id),
  benchmark_id        bigint NOT NULL REFERENCES benchmarks (id),
  metric_id           bigint NOT NULL REFERENCES metrics (id),
  last_good_commit_id bigint REFERENCES commits (id),
  first_bad_commit_id bigint NOT NULL REFERENCES commits (id),
  magnitude           double precision NOT NULL,
  p_value             double precision CHECK (p_value BETWEEN 0 AND 1),
  detector            text NOT NULL
                      CHECK (detector IN ('edivisive', 'ewma', 'cusum', 'page_hinkley')),
  state               text NOT NULL DEFAULT 'open'
                      CHECK (state IN ('open', 'acknowledged', 'false_positive', 'resolved')),
  note                text NOT NULL DEFAULT '',
  state_changed_by    text,  -- token name or user who last changed state/note
  state_changed_at    timestamptz,
  created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX alerts_project_state_created ON alerts (project_id, state, created_at DESC);
CREATE INDEX alerts_series ON alerts (branch_id, testbed_id, benchmark_id, metric_id);

-- A bisection of a commit range; steps is the list of measured commits with their results.
CREATE TABLE bisect_jobs (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id   bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  alert_id     bigint REFERENCES alerts (id) ON DELETE SET NULL,
  testbed_id   bigint REFERENCES testbeds (id),
  benchmark_id bigint REFERENCES benchmarks (id),
  metric_id    bigint REFERENCES metrics (id),
  good_sha     text NOT NULL CHECK (good_sha ~ '^[0-9a-f]{40}$'),
  bad_sha      text NOT NULL CHECK (bad_sha ~ '^[0-9a-f]{40}$'),
  state        text NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  steps        jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(steps) = 'array'),
  culprit_sha  text CHECK (culprit_sha ~ '^[0-9a-f]{40}$'),
  created_by   text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX bisect_jobs_project_created ON bisect_jobs (project_id, created_at DESC);

-- Online monitors (EWMA, CUSUM, Page-Hinkley) per series: their running state, so that
-- analysing a new run costs O(1); reset when an alert on the series is acknowledged.
CREATE TABLE series_monitor_state (
  branch_id         bigint NOT NULL REFERENCES branches (id) ON DELETE CASCADE,
  testbed_id        bigint NOT NULL REFERENCES testbeds (id) ON DELETE CASCADE,
  benchmark_id      bigint NOT NULL REFERENCES benchmarks (id) ON DELETE CASCADE,
  metric_id         bigint NOT NULL REFERENCES metrics (id) ON DELETE CASCADE,
  detector          text NOT NULL CHECK (detector IN ('ewma', 'cusum', 'page_hinkley')),
  algorithm_version text NOT NULL,
  parameters        jsonb NOT NULL DEFAULT '{}',
  state             jsonb NOT NULL,
  last_run_id       uuid REFERENCES runs (id) ON DELETE SET NULL,
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (branch_id, testbed_id, benchmark_id, metric_id, detector)
);
