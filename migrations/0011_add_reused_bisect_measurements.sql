-- A remote bisect's step answered by a measurement another bisect already made (the same
-- commits side by side, the same repetitions, benchmarks, suite, metric, build and testbed):
-- reused_from names that step, and no agent measures it again. Only original measurements are
-- reused, and each at most once per bisect, so a bisect never counts one sample twice.
ALTER TABLE bisect_steps
  ADD COLUMN reused_from bigint REFERENCES bisect_steps (id) ON DELETE SET NULL;
CREATE INDEX bisect_steps_done ON bisect_steps (bisect_id) WHERE state = 'done' AND reused_from IS NULL;
