-- 0008_remote_bisects: bisects the server runs on benchmark hosts (issue 6, remote mode).
-- `perfwarden bisect --remote` queues a job; `perfwarden agent` processes on a testbed claim its
-- steps (one measurement each: some commits of the range measured side by side) and report
-- the results. The server replays the bisect algorithm over the log of done steps after each
-- result and queues the measurement it asks for next, so a bisect is its job row plus its
-- steps in ordinal order. Local bisects (the runner's posted answer) leave the new job
-- columns NULL.

-- The testbed whose agents may measure it: the same hardware must measure every step, or the
-- measurements compared side by side in one step would still be comparable but steps would not.
ALTER TABLE bisect_jobs ADD COLUMN testbed_name text;
-- What the bisect was queued with (commits of the range, search options, benchmarks, suite,
-- metric, build command): the replay's input, fixed for the job's life.
ALTER TABLE bisect_jobs ADD COLUMN request jsonb;
-- Why a remote bisect failed when it produced no report (an end does not build, a step kept
-- failing on the agents).
ALTER TABLE bisect_jobs ADD COLUMN error text;
ALTER TABLE bisect_jobs ADD CONSTRAINT bisect_jobs_remote_request
  CHECK ((testbed_name IS NULL) = (request IS NULL));
-- Agents look for work by project and testbed among the jobs still going.
CREATE INDEX bisect_jobs_remote_active ON bisect_jobs (project_id, testbed_name)
  WHERE testbed_name IS NOT NULL AND state IN ('pending', 'running');

CREATE TABLE bisect_steps (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  bisect_id        bigint NOT NULL REFERENCES bisect_jobs (id) ON DELETE CASCADE,
  -- 0, 1, 2...: the replay reads the done steps in this order, which must be the order the
  -- algorithm asked for them.
  ordinal          integer NOT NULL CHECK (ordinal >= 0),
  request          jsonb NOT NULL,  -- bisect::RequestJson: targets (positions), repetitions
  -- queued: waiting for an agent; claimed: an agent holds it until lease_expires_at (another
  -- agent may take it over after that); done: result stored; failed: it failed on the agents
  -- too often (the job failed with it); cancelled: its job was cancelled.
  state            text NOT NULL DEFAULT 'queued'
                   CHECK (state IN ('queued', 'claimed', 'done', 'failed', 'cancelled')),
  agent            text,  -- the last agent that claimed it
  -- SHA-256 of the claim's random token; only the agent holding the claim can report on it,
  -- and a reclaim replaces it, so a presumed-dead agent's late report is refused.
  token_hash       text,
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),  -- claims so far
  lease_seconds    integer,  -- as the agent asked at claim; heartbeats extend by as much
  claimed_at       timestamptz,
  lease_expires_at timestamptz,
  result           jsonb,  -- bisect::MeasurementJson
  builds           integer CHECK (builds >= 0),
  runs             integer CHECK (runs >= 0),
  last_error       text,  -- the last failure an agent reported (kept when the step is requeued)
  created_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  UNIQUE (bisect_id, ordinal),
  CHECK (state <> 'claimed' OR (token_hash IS NOT NULL AND lease_expires_at IS NOT NULL)),
  CHECK (state <> 'done' OR result IS NOT NULL)
);
-- The algorithm asks for one measurement at a time, so a job has at most one open step; the
-- index also finds the claimable steps (open ones) without scanning finished history.
CREATE UNIQUE INDEX bisect_steps_open ON bisect_steps (bisect_id)
  WHERE state IN ('queued', 'claimed');
