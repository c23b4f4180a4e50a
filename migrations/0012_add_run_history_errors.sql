-- A run whose history analysis failed again and again for a reason other than an outage (a bug
-- the data exposes) is set aside so that the project's history goes on: history_analysed_at is
-- set and history_error says why. Its points are not in the series. After a fix, an operator
-- re-queues such runs with
--   UPDATE runs SET history_analysed_at = NULL, history_error = NULL WHERE history_error IS NOT NULL;
ALTER TABLE runs ADD COLUMN history_error text;
