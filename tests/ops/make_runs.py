#!/usr/bin/env python3
"""Writes run uploads (wire format v1) for the operations tests (tests/ops/*.sh).

  make_runs.py DIR PROJECT N [PAD_TO_BYTES]

DIR/main-1.json .. DIR/main-N.json: main-branch runs of commits 1..N, three benchmarks of ten
repetitions each with ~1% noise; BM_A is 8% slower from commit N/2 + 1 on (a step the history
worker reports as one regression alert). DIR/pr.json: a pull-request run branched at commit N
with BM_B 10% slower (a verdict calls it a regression). With PAD_TO_BYTES, DIR/padded.json is
main-1.json with a new id and trailing blanks to exactly that many bytes (a body at a size limit).
"""
import json
import sys


def sha(commit, salt):
    return f"{salt:08x}{commit:032x}"


def run_id(n):
    return f"00000000-0000-4000-8000-{n:012d}"


def upload(project, n, branch, commit, a_factor, b_factor, pr=None, merge_base=None):
    results = []
    for k, (name, center) in enumerate(
        [("BM_A", 1000 * a_factor), ("BM_B", 2000 * b_factor), ("BM_C", 3000)]
    ):
        wobble = (n * 37 + k * 11) % 21 - 10
        level = center * (1 + 0.001 * wobble)
        values = [round(level * (1 + 0.001 * ((i * 7) % 11 - 5)), 3) for i in range(10)]
        results.append({"suite": "s", "benchmark": name, "metric": "real_time", "unit": "ns",
                        "direction": "lower", "values": values})
    body = {
        "id": run_id(n),
        "project": project,
        "branch": branch,
        "commit": {"sha": sha(commit, 0xA), "parents": [sha(commit - 1, 0xA)],
                   "subject": f"commit {commit}"},
        "testbed": {"name": "bed", "fingerprint": {"cpu_model": "cpu-a"}},
        "started_at": f"2026-01-01T00:{n % 60:02d}:00Z",
        "finished_at": f"2026-01-01T00:{n % 60:02d}:30Z",
        "results": results,
    }
    if pr is not None:
        body["ci"] = {"provider": "github", "pr": pr}
        body["target_branch"] = "main"
        body["merge_base"] = merge_base
    return body


def main():
    out, project, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(1, n + 1):
        body = upload(project, i, "main", i, 1.08 if i > n // 2 else 1.0, 1.0)
        with open(f"{out}/main-{i}.json", "w") as f:
            json.dump(body, f)
    pr = upload(project, 900000, "feature", 900000, 1.08, 1.10, pr=7, merge_base=sha(n, 0xA))
    pr["commit"]["parents"] = [sha(n, 0xA)]
    with open(f"{out}/pr.json", "w") as f:
        json.dump(pr, f)
    if len(sys.argv) > 4:
        size = int(sys.argv[4])
        text = json.dumps(upload(project, 900001, "main", 900001, 1.0, 1.0))
        if len(text) > size:
            sys.exit(f"a run upload is {len(text)} bytes, more than {size}")
        with open(f"{out}/padded.json", "w") as f:
            f.write(text + " " * (size - len(text)))


if __name__ == "__main__":
    main()
