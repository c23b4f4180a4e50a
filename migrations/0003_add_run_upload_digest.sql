-- 0003_add_run_upload_digest: runs.upload no longer repeats every sample. From this version the
-- stored upload is the canonical upload with each series' values emptied (the values live in
-- samples, once), and upload_sha256 is the SHA-256 of the full canonical upload, which is what
-- an idempotent re-post is compared with. Rows stored before keep their full upload and a NULL
-- digest; the server reads and compares both forms.
ALTER TABLE runs ADD COLUMN upload_sha256 text CHECK (upload_sha256 ~ '^[0-9a-f]{64}$');
