-- 0018_widen_project_names: project names are 1..200 characters, as for branches and testbeds
-- (wire::kMaxNameLength, the one limit the API checks). 0001 allowed 1..128, so a name of
-- 129..200 characters passed the API and failed here with no field named. Widening keeps every
-- stored name valid.
ALTER TABLE projects DROP CONSTRAINT projects_name_check;
ALTER TABLE projects ADD CONSTRAINT projects_name_check
  CHECK (char_length(name) BETWEEN 1 AND 200);
