-- 0014_protect_branches: tokens bound to branches (issue 27). A token with the new ingest-pr
-- scope may post runs and verdicts only for branches its project does not protect; the
-- protected ones (the history's tracked branches, main and master by default, or the project's
-- own list) take a token with the ingest scope. protected_branches NULL: the server's default;
-- an empty array: no branch is protected. Entries are names or shell patterns ("release/*").
ALTER TABLE tokens DROP CONSTRAINT IF EXISTS tokens_scopes_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_scopes_check
  CHECK (cardinality(scopes) > 0
         AND scopes <@ ARRAY['ingest', 'ingest-pr', 'read', 'admin', 'triage']);

ALTER TABLE projects ADD COLUMN protected_branches text[]
  CHECK (protected_branches IS NULL OR cardinality(protected_branches) <= 64);
