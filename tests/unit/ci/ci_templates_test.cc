// SPDX-License-Identifier: Apache-2.0
// Keeps the CI templates honest without GitHub or GitLab: the YAML files have the parts CI needs,
// every perfwarden flag they (and docs/ci.md) pass is one `perfwarden <verb> --help` lists, and
// their shell runs, as the CI would run it, against stand-ins for perfwarden, gh and curl (no
// network): the gate's exit code becomes the job's, and the comment is updated by its marker or
// created.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "tests/unit/ci/ci_shell.h"

namespace perfwarden {
namespace {

using namespace perfwarden::ci_test;  // NOLINT(build/namespaces): the shared fixture

// The options a verb's --help lists (lines that start with an option, as CLI11 prints them).
std::set<std::string> HelpFlags(const std::string& verb) {
  Outcome help = Shell(std::string(PERFWARDEN_BIN_DIR) + "/perfwarden " + verb + " --help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  std::set<std::string> flags;
  std::istringstream lines(help.output);
  const std::regex option(R"(^\s+(-\w,)?(--[a-z][a-z0-9-]*))");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, option)) flags.insert(m[2]);
  }
  return flags;
}

TEST(CiTemplatesTest, TheYamlFilesHaveWhatCiNeeds) {
  const YAML::Node action = YAML::LoadFile(Src("ci/github/action.yml").string());
  EXPECT_EQ(action["runs"]["using"].as<std::string>(), "composite");
  EXPECT_TRUE(action["inputs"]["token"]["required"].as<bool>());
  std::map<std::string, std::string> scripts;  // step id -> run
  std::map<std::string, YAML::Node> actions;   // step id -> the step, for those using an action
  for (const YAML::Node& step : action["runs"]["steps"]) {
    if (step["uses"]) {
      actions[step["id"].as<std::string>()] = step;
      continue;
    }
    EXPECT_EQ(step["shell"].as<std::string>(), "bash");
    scripts[step["id"].as<std::string>()] = step["run"].as<std::string>();
  }
  // The baseline build cache: restored before the gate and saved after it, under the key and
  // directory the `baseline` step writes (a composite action runs no post step, hence
  // actions/cache's restore and save halves rather than actions/cache itself).
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_TRUE(
      actions["baseline-restore"]["uses"].as<std::string>().starts_with("actions/cache/restore@"));
  EXPECT_TRUE(
      actions["baseline-save"]["uses"].as<std::string>().starts_with("actions/cache/save@"));
  for (const auto& [id, step] : actions) {
    EXPECT_EQ(step["with"]["key"].as<std::string>(), "${{ steps.baseline.outputs.key }}") << id;
    EXPECT_EQ(step["with"]["path"].as<std::string>(), "${{ steps.baseline.outputs.dir }}") << id;
  }
  for (const char* key : {"\"enabled=", "\"dir=", "\"key="}) {
    EXPECT_NE(scripts["baseline"].find(key), std::string::npos) << key;
  }
  EXPECT_NE(scripts["gate"].find("\"baseline-cached="), std::string::npos);
  // Every output names a step that exists and writes that key.
  const std::regex ref(R"(steps\.([a-z]+)\.outputs\.([a-z-]+))");
  for (const auto& output : action["outputs"]) {
    const std::string value = output.second["value"].as<std::string>();
    ASSERT_TRUE(std::regex_search(value, ref)) << value;
    for (std::sregex_iterator it(value.begin(), value.end(), ref), end; it != end; ++it) {
      EXPECT_NE(scripts[(*it)[1].str()].find("\"" + (*it)[2].str() + "="), std::string::npos)
          << value;
    }
  }

  const YAML::Node workflow = YAML::LoadFile(Src("ci/github/workflow-example.yml").string());
  EXPECT_TRUE(workflow["on"]["pull_request"].IsMap());
  EXPECT_EQ(workflow["on"]["push"]["branches"][0].as<std::string>(), "main");
  // Read-only at the top (EveryWorkflowIsReadOnlyAndEveryActionPinned); the job comments.
  EXPECT_EQ(workflow["jobs"]["perf"]["permissions"]["pull-requests"].as<std::string>(), "write");
  int full_checkouts = 0, checkouts = 0, gates = 0, installs = 0;
  for (const auto& job : workflow["jobs"]) {
    for (const YAML::Node& step : job.second["steps"]) {
      const std::string uses = step["uses"].as<std::string>("");
      // Indexing a missing key's node throws in yaml-cpp, hence IsMap() first.
      if (uses.rfind("actions/checkout@", 0) == 0) {
        ++checkouts;
        if (step["with"].IsMap() && step["with"]["fetch-depth"].as<int>(1) == 0) ++full_checkouts;
      }
      if (uses.find("ci/github") != std::string::npos) {
        // Both uses of the action (install-only for main's `perfwarden run`, the gate for pull
        // requests) take the released runner rather than a build from source. Pull requests
        // get the restricted token (ingest-pr), main the full one.
        const bool install = step["with"]["install-only"].as<std::string>("false") == "true";
        EXPECT_EQ(
            step["with"]["token"].as<std::string>(),
            install ? "${{ secrets.PERFWARDEN_TOKEN }}" : "${{ secrets.PERFWARDEN_PR_TOKEN }}");
        EXPECT_FALSE(step["with"]["version"].as<std::string>("").empty()) << uses;
        // A download is checked: the example names the sha256 to fill in, never "" or "skip".
        const std::string sha256 = step["with"]["sha256"].as<std::string>("");
        EXPECT_TRUE(sha256 != "" && sha256 != "skip") << uses << ": sha256 '" << sha256 << "'";
        EXPECT_FALSE(step["with"]["perfwarden-path"]) << uses;
        ++(install ? installs : gates);
      }
    }
  }
  EXPECT_EQ(full_checkouts, 1);
  EXPECT_EQ(checkouts, 1);  // the user's repository; perfwarden is not checked out and built
  EXPECT_EQ(gates, 1);
  EXPECT_EQ(installs, 1);

  const YAML::Node gitlab = YAML::LoadFile(Src("ci/gitlab/perfwarden.gitlab-ci.yml").string());
  const YAML::Node job = gitlab[".perfwarden"];
  ASSERT_TRUE(job.IsMap());
  EXPECT_EQ(job["variables"]["GIT_DEPTH"].as<std::string>(), "0");
  EXPECT_EQ(job["artifacts"]["reports"]["junit"].as<std::string>(), "perfwarden-junit.xml");
  EXPECT_EQ(job["artifacts"]["reports"]["metrics"].as<std::string>(), "metrics.txt");
  EXPECT_EQ(job["artifacts"]["when"].as<std::string>(), "always");
  ASSERT_EQ(job["rules"].size(), 2u);
  EXPECT_NE(job["rules"][0]["if"].as<std::string>().find("merge_request_event"), std::string::npos);
  EXPECT_NE(job["rules"][1]["if"].as<std::string>().find("CI_DEFAULT_BRANCH"), std::string::npos);
  // Two caches: the spool per branch, the baseline build per merge-base, in the directory that
  // PERFWARDEN_BASELINE_CACHE gives perfwarden; both saved when the job fails (a regression) too.
  ASSERT_TRUE(job["cache"].IsSequence());
  ASSERT_EQ(job["cache"].size(), 2u);
  EXPECT_EQ(job["cache"][0]["paths"][0].as<std::string>(), ".perfwarden/spool/");
  const YAML::Node baseline = job["cache"][1];
  EXPECT_EQ(baseline["key"].as<std::string>(),
            "perfwarden-baseline-$CI_MERGE_REQUEST_DIFF_BASE_SHA");
  EXPECT_EQ("$CI_PROJECT_DIR/" + baseline["paths"][0].as<std::string>(),
            job["variables"]["PERFWARDEN_BASELINE_CACHE"].as<std::string>() + "/");
  for (const YAML::Node& cache : job["cache"]) {
    EXPECT_EQ(cache["when"].as<std::string>(), "always");
  }
}

// Every `uses:` in ci/github (commented-out examples included) names a full commit, which cannot
// be moved as a tag can, and its release tag in a comment; every workflow reads by default and
// widens permissions only in the job that needs them.
TEST(CiTemplatesTest, EveryWorkflowIsReadOnlyAndEveryActionPinned) {
  const std::regex uses_line(R"(^[\s#-]*uses:)");
  const std::regex pinned(
      R"(^[\s#-]*uses: [A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$)");
  int uses = 0, workflows = 0;
  for (const auto& entry : fs::directory_iterator(Src("ci/github"))) {
    if (entry.path().extension() != ".yml") continue;
    const std::string file = entry.path().filename().string();
    std::istringstream lines(Read(entry.path()));
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      if (!std::regex_search(line, uses_line)) continue;
      ++uses;
      EXPECT_TRUE(std::regex_match(line, pinned)) << file << ":" << number << ": " << line;
      // Zeros are the examples' placeholder for perfwarden's own release, which the user fills in.
      if (line.find('@' + std::string(40, '0')) != std::string::npos) {
        EXPECT_TRUE(file == "workflow-example.yml" || file.starts_with("fork-")) << line;
        EXPECT_NE(line.find("uses: perfwarden/perfwarden/ci/github@"), std::string::npos) << line;
      }
    }
    const YAML::Node yaml = YAML::LoadFile(entry.path().string());
    if (!yaml["jobs"]) continue;  // the action: it takes the permissions of the job using it
    ++workflows;
    ASSERT_TRUE(yaml["permissions"].IsMap()) << file << ": no top-level permissions";
    EXPECT_EQ(yaml["permissions"].size(), 1u) << file;
    EXPECT_EQ(yaml["permissions"]["contents"].as<std::string>(""), "read") << file;
    for (const auto& job : yaml["jobs"]) {
      for (const auto& permission : job.second["permissions"]) {
        const std::string scope = permission.first.as<std::string>();
        const std::string level = permission.second.as<std::string>();
        // What each job's step needs: the comment; the release upload and its attestation.
        static const std::set<std::string> kWrites = {"pull-requests", "contents", "id-token",
                                                      "attestations"};
        EXPECT_TRUE(level == "read" || kWrites.count(scope)) << file << ": " << scope;
      }
    }
  }
  // action: cache restore and save; release: checkout and attestation; example: checkout (and
  // the commented-out one), perfwarden twice, upload-artifact; fork-measure: checkout, perfwarden,
  // upload-artifact; fork-report: checkout twice, perfwarden, download-artifact.
  EXPECT_EQ(uses, 2 + 2 + 5 + 3 + 4);
  EXPECT_EQ(workflows, 4);
  // The release attests what it publishes, with the permissions that needs.
  const YAML::Node release = YAML::LoadFile(Src("ci/github/release-workflow.yml").string());
  const YAML::Node job = release["jobs"]["release"];
  EXPECT_EQ(job["permissions"]["id-token"].as<std::string>(""), "write");
  EXPECT_EQ(job["permissions"]["attestations"].as<std::string>(""), "write");
  int attestations = 0;
  for (const YAML::Node& step : job["steps"]) {
    if (step["uses"].as<std::string>("").starts_with("actions/attest-build-provenance@")) {
      ++attestations;
      EXPECT_EQ(step["with"]["subject-path"].as<std::string>(), "build/package/packages/*");
    }
  }
  EXPECT_EQ(attestations, 1);
}

TEST(CiTemplatesTest, EveryPerfwardenFlagIsOneTheCliAccepts) {
  std::map<std::string, std::set<std::string>> accepted;
  for (const char* verb : {"run", "gate", "push", "publish"}) accepted[verb] = HelpFlags(verb);
  ASSERT_TRUE(accepted["gate"].count("--junit")) << "is " PERFWARDEN_BIN_DIR "/perfwarden built?";
  // A flag belongs to the verb named last before it on its line (or on the line before, when
  // that one ends in '\'): `perfwarden gate`, the scripts' gate_args, PERFWARDEN_GATE_ARGS,
  // args-gate.
  const std::regex verb_word(R"(^[`"]?(run|gate|push|publish)\b)");
  const std::regex args(R"((run|gate)_args|(RUN|GATE)_ARGS|args-(run|gate))");
  const std::regex flag(R"(--[a-z][a-z0-9-]*)");
  std::set<std::string> checked;
  for (const char* file :
       {"ci/github/action.yml", "ci/github/workflow-example.yml", "ci/github/fork-measure.yml",
        "ci/github/fork-report.yml", "ci/gitlab/perfwarden.gitlab-ci.yml", "ci/comment.sh",
        "docs/ci.md", "docs/ci-forks.md"}) {
    std::istringstream lines(Read(Src(file)));
    std::string verb;
    int number = 0;
    for (std::string line, previous; std::getline(lines, line); previous = line) {
      ++number;
      if (previous.empty() || previous.back() != '\\') verb.clear();
      std::istringstream words(line);
      std::smatch m;
      for (std::string word, before; words >> word; before = word) {
        static const std::string kProgram = "perfwarden";
        if (before.size() >= kProgram.size() &&
            before.compare(before.size() - kProgram.size(), kProgram.size(), kProgram) == 0 &&
            std::regex_search(word, m, verb_word)) {
          verb = m[1];
          continue;
        }
        if (std::regex_search(word, m, args)) {  // may hold a flag too: gate_args+=(--x)
          verb = m[1].matched ? m[1] : m[2].matched ? m[2] : m[3];
          for (char& c : verb) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (!verb.empty() && std::regex_search(word, m, flag)) {
          checked.insert(verb + " " + m.str());
          EXPECT_TRUE(accepted[verb].count(m.str()))
              << file << ":" << number << ": perfwarden " << verb << " has no " << m.str();
        }
      }
    }
  }
  // The scanner saw the flags the templates depend on (a scanner that finds nothing passes).
  for (const char* used :
       {"gate --junit", "gate --comment-file", "gate --gitlab-metrics", "gate --rerun-inconclusive",
        "gate --require-baseline", "gate --baseline-cache", "gate --no-baseline-cache",
        "run --config", "run --skip-build", "run --paired", "run --no-push", "gate --no-post",
        "gate --artifact", "publish --expect-commit", "publish --expect-pr",
        "publish --comment-file"}) {
    EXPECT_TRUE(checked.count(used)) << used;
  }
}

// A comment (GitHub: `author` a login) or a note (GitLab: `author` a user id) as JSON.
std::string Comment(int id, const std::string& author, const std::string& body) {
  const bool gitlab = std::isdigit(static_cast<unsigned char>(author.at(0))) != 0;
  return "{\"id\": " + std::to_string(id) + ", " +
         (gitlab ? "\"author\": {\"id\": " + author + "}"
                 : "\"user\": {\"login\": \"" + author + "\"}") +
         ", \"body\": \"" + body + "\"}";
}
const std::string kMarkedBody = std::string(kMarker) + "\\nold";  // a JSON string's text

TEST_F(CiShellTest, TheActionFailsOnARegressionAndUpdatesTheMarkedComment) {
  if (!HaveJq()) GTEST_SKIP() << "the gh stand-in needs jq";
  // Someone else's comment that starts with the marker comes first: it is not the one edited.
  Write(
      "comments.json",
      "[" + Comment(4, "mallory", kMarkedBody) + "," + Comment(5, "alice", "LGTM") + "," +
          Comment(6, "github-actions[bot]", "<!-- perfwarden:gate project=demo testbed=other -->") +
          "," + Comment(7, "github-actions[bot]", kMarkedBody) + "]");
  Outcome o = RunAction({{"token", "pwt_secret"}},
                        {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "17"}, {"GATE_EXIT", "1"}});
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_EQ(outputs_["steps.gate.outputs.outcome"], "regression");
  EXPECT_TRUE(fs::exists(outputs_["steps.gate.outputs.junit"]));
  const std::string log = Log();
  EXPECT_TRUE(Contains(log, "gh api --method PATCH repos/owner/repo/issues/comments/7 "));
  EXPECT_FALSE(Contains(log, "--method POST"));
  EXPECT_FALSE(Contains(log, "comments/4"));
  EXPECT_EQ(Read(dir_ / "sent").rfind(kMarker, 0), 0u);
  EXPECT_FALSE(Contains(o.output, "pwt_secret"));
}

TEST_F(CiShellTest, TheActionPassesAndCreatesTheCommentWhenNoneHasTheMarker) {
  if (!HaveJq()) GTEST_SKIP() << "the gh stand-in needs jq";
  Write("comments.json", "[" + Comment(5, "alice", "LGTM") + "]");
  Outcome o = RunAction({{"token", "pwt_secret"},
                         {"require-baseline", "true"},
                         {"args-gate", "--max-repetitions 40"}},
                        {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "17"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(outputs_["steps.gate.outputs.outcome"], "pass");
  const std::string log = Log();
  EXPECT_TRUE(Contains(log, "--require-baseline --max-repetitions 40\n"));
  EXPECT_TRUE(Contains(log, "gh api --method POST repos/owner/repo/issues/17/comments "));
}

TEST_F(CiShellTest, TheActionReportsInfrastructureAndUsageErrors) {
  // Server down: run spools (3), gate still runs and its 3 is the result; a push: no comment.
  Outcome down = RunAction({{"token", "pwt_secret"}},
                           {{"GITHUB_EVENT_NAME", "push"}, {"RUN_EXIT", "3"}, {"GATE_EXIT", "3"}});
  EXPECT_EQ(down.exit_code, 3) << down.output;
  EXPECT_EQ(outputs_["steps.gate.outputs.outcome"], "infrastructure");
  // The paired gate (mode auto) measures this build once: the run measures it side by side.
  EXPECT_TRUE(Contains(Log(), "perfwarden run --config perfwarden.yaml --paired\n"));
  EXPECT_TRUE(std::regex_search(
      Log(), std::regex("perfwarden gate --config perfwarden.yaml --junit \\S+ "
                        "--comment-file \\S+ --color always --mode auto --rerun-inconclusive\n")))
      << Log();
  EXPECT_FALSE(Contains(Log(), "gh "));
  // A usage error in run (here: no token, as in a fork's pull request) stops before the gate.
  std::ofstream(dir_ / "log", std::ios::trunc);
  Outcome bad = RunAction({{"token", ""}}, {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "3"}});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_EQ(outputs_["steps.run.outputs.outcome"], "error");
  EXPECT_FALSE(Contains(Log(), "perfwarden gate"));
}

TEST_F(CiShellTest, TheActionKeepsTheBaselineBuildInTheActionsCache) {
  // A checkout with two commits: on a push, the paired gate's baseline is HEAD's first parent.
  fs::create_directories(dir_ / "work");
  const std::string git =
      "git -C " + Quote((dir_ / "work").string()) + " -c user.name=T -c user.email=t@example.com ";
  ASSERT_EQ(Shell(git + "init -q -b main").exit_code, 0);
  ASSERT_EQ(Shell(git + "commit -q --allow-empty -m one").exit_code, 0);
  ASSERT_EQ(Shell(git + "commit -q --allow-empty -m two").exit_code, 0);
  Outcome parent = Shell(git + "rev-parse HEAD^");
  ASSERT_EQ(parent.exit_code, 0);
  const std::string base = parent.output.substr(0, 40);
  const Env push = {{"GITHUB_EVENT_NAME", "push"}, {"RUNNER_OS", "Linux"}, {"RUNNER_ARCH", "X64"}};
  const std::string key = "perfwarden-baseline-Linux-X64-" + base;
  const std::string dir = (dir_ / "perfwarden-baseline-cache").string();

  // A miss: restored (nothing), the gate builds into the directory, saved under the key.
  Outcome o = RunAction({{"token", "pwt_secret"}}, push);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), "--baseline-cache " + dir + "\n"));
  ASSERT_EQ(used_.size(), 2u);
  EXPECT_EQ(used_[0].at("id"), "baseline-restore");
  EXPECT_EQ(used_[1].at("id"), "baseline-save");
  for (const Env& step : used_) {
    EXPECT_EQ(step.at("key"), key);
    EXPECT_EQ(step.at("path"), dir);
  }

  // A hit on the exact key: nothing to save.
  uses_outputs_["steps.baseline-restore.outputs.cache-hit"] = "true";
  o = RunAction({{"token", "pwt_secret"}}, push);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  ASSERT_EQ(used_.size(), 1u);
  EXPECT_EQ(used_[0].at("id"), "baseline-restore");

  // baseline-cache: "false": no Actions cache, and perfwarden caches nothing either.
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunAction({{"token", "pwt_secret"}, {"baseline-cache", "false"}}, push);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(used_.empty());
  EXPECT_TRUE(Contains(Log(), " --no-baseline-cache\n"));
  // mode unpaired without confirm measures nothing side by side: nothing to cache.
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunAction({{"token", "pwt_secret"}, {"mode", "unpaired"}}, push);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(used_.empty());
  EXPECT_FALSE(Contains(Log(), "baseline-cache"));
  // An invalid value is a usage error.
  o = RunAction({{"token", "pwt_secret"}, {"baseline-cache", "yes"}}, push);
  EXPECT_EQ(o.exit_code, 2) << o.output;
}

TEST_F(CiShellTest, TheActionCachesNothingWithoutAMergeBase) {
  // Not a git checkout (or a shallow one): no key to name, so no Actions cache, and the gate
  // keeps perfwarden's own default.
  Outcome o =
      RunAction({{"token", "pwt_secret"}, {"comment", "false"}},
                {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "17"}, {"GITHUB_BASE_REF", "main"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(used_.empty());
  EXPECT_EQ(outputs_["steps.baseline.outputs.enabled"], "false");
  EXPECT_FALSE(Contains(Log(), "baseline-cache"));
}

constexpr char kNotes[] = "https://gitlab.example/api/v4/projects/42/merge_requests/9/notes";

TEST_F(CiShellTest, TheGitlabJobGatesMergeRequestsAndUpdatesTheMarkedNote) {
  // Without PERFWARDEN_GITLAB_TOKEN: no note, and the gate's exit code stands.
  Outcome o =
      RunGitlab({{"CI_MERGE_REQUEST_IID", "9"}, {"PERFWARDEN_TOKEN", "t"}, {"GATE_EXIT", "1"}});
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_TRUE(Contains(
      Log(),
      "perfwarden gate --junit perfwarden-junit.xml --gitlab-metrics metrics.txt "
      "--comment-file perfwarden-comment.md --color always --mode auto --rerun-inconclusive\n"));
  EXPECT_TRUE(fs::exists(dir_ / "work/perfwarden-junit.xml"));
  EXPECT_TRUE(Contains(o.output, "PERFWARDEN_GITLAB_TOKEN"));
  EXPECT_FALSE(Contains(Log(), "curl "));

  if (!HaveJq()) GTEST_SKIP() << "the template's note needs jq";
  // The token's marked note is on the second page of notes: updated. The marked note on the
  // first page is another user's, and is left alone.
  Write("gitlab-user.json", R"({"id": 77, "username": "project_42_bot"})");
  Write("notes-1.json",
        "[" + Comment(1, "13", "first") + "," + Comment(2, "13", kMarkedBody) + "]");
  Write("notes-2.json", "[" + Comment(55, "77", kMarkedBody) + "]");
  const Env mr = {{"CI_MERGE_REQUEST_IID", "9"},
                  {"PERFWARDEN_TOKEN", "t"},
                  {"PERFWARDEN_GITLAB_TOKEN", "glpat_x"}};
  o = RunGitlab(mr);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), "curl GET https://gitlab.example/api/v4/user\n"));
  EXPECT_TRUE(Contains(Log(), std::string("curl PUT ") + kNotes + "/55\n"));
  EXPECT_FALSE(Contains(Log(), "/notes/2"));
  EXPECT_EQ(Read(dir_ / "sent").rfind(kMarker, 0), 0u);
  EXPECT_FALSE(Contains(o.output, "glpat_x"));
  // Only another user's marked note: one is created, the other stays as it was.
  Write("notes-2.json", R"([])");
  o = RunGitlab(mr);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), std::string("curl POST ") + kNotes + "\n"));
  EXPECT_FALSE(Contains(Log(), "/notes/2"));
  // A token whose user GitLab does not name: no note is touched, the gate's result stands.
  fs::remove(dir_ / "gitlab-user.json");
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunGitlab(mr);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(o.output, "warning: the merge request note was not created or updated"));
  EXPECT_FALSE(Contains(Log(), "curl POST"));
  EXPECT_FALSE(Contains(Log(), "curl PUT"));
}

TEST_F(CiShellTest, TheGitlabDefaultBranchJobOnlyRuns) {
  Outcome o = RunGitlab({{"PERFWARDEN_TOKEN", "pwt_secret"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Log(), "perfwarden run\n");
  o = RunGitlab({{"PERFWARDEN_TOKEN", "pwt_secret"}, {"RUN_EXIT", "3"}});
  EXPECT_EQ(o.exit_code, 3) << o.output;  // allow_failure: exit_codes: [3]
}

TEST_F(CiShellTest, CommentScriptUpdatesByMarkerAndRefusesOtherBodies) {
  EXPECT_EQ(Shell("bash -n " + Quote(Src("ci/comment.sh").string())).exit_code, 0);
  if (!HaveJq()) GTEST_SKIP() << "comment.sh gitlab needs jq";
  const std::string script = "bash " + Quote(Src("ci/comment.sh").string()) + " ";
  Write("body.md", std::string(kMarker) + "\nnew\n");
  Write("gitlab-user.json", R"({"id": 77})");
  Write("notes-1.json",
        "[" + Comment(2, "13", kMarkedBody) + "," + Comment(3, "77", kMarkedBody) + "]");
  const Env gitlab = {{"PERFWARDEN_GITLAB_TOKEN", "glpat_x"},
                      {"CI_API_V4_URL", "https://gl/api/v4"},
                      {"CI_PROJECT_ID", "42"}};
  Outcome o = Bash(script + "gitlab ../body.md 8", gitlab);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), "curl PUT https://gl/api/v4/projects/42/merge_requests/8/notes/3\n"));
  EXPECT_FALSE(Contains(Log(), "/notes/2"));
  Write("plain.md", "not perfwarden's\n");
  EXPECT_EQ(Bash(script + "gitlab ../plain.md 8", gitlab).exit_code, 2);
  EXPECT_EQ(Bash(script + "github ../body.md not-a-number", {{"GH_TOKEN", "ghs_job"}}).exit_code,
            2);
  EXPECT_EQ(Bash(script + "bitbucket ../body.md 1", {}).exit_code, 2);
}

TEST_F(CiShellTest, CommentScriptEditsOnlyItsOwnAuthorsComment) {
  if (!HaveJq()) GTEST_SKIP() << "the gh stand-in needs jq";
  const std::string script =
      "bash " + Quote(Src("ci/comment.sh").string()) + " github ../body.md 3";
  Write("body.md", std::string(kMarker) + "\nnew\n");
  // Marked comments by a user, by a user named like the bot, by an app and by a bot account.
  Write("comments.json", "[" + Comment(11, "mallory", kMarkedBody) + "," +
                             Comment(12, "github-actions", kMarkedBody) + "," +
                             Comment(13, "perf-app[bot]", kMarkedBody) + "," +
                             Comment(14, "perf-bot", kMarkedBody) + "]");
  const Env github = {{"GH_TOKEN", "ghs_job"}, {"GITHUB_REPOSITORY", "owner/repo"}};
  // GITHUB_TOKEN (gh api user refused): github-actions[bot], which wrote none of them.
  Outcome o = Bash(script, github);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), "gh api --method POST repos/owner/repo/issues/3/comments "));
  EXPECT_FALSE(Contains(Log(), "PATCH"));
  // A personal access token: its user's comment.
  Write("user.json", R"({"login": "perf-bot"})");
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = Bash(script, github);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), "gh api --method PATCH repos/owner/repo/issues/comments/14 "));
  // A GitHub App's token: the author it is told.
  Env app = github;
  app["PERFWARDEN_COMMENT_AUTHOR"] = "perf-app[bot]";
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = Bash(script, app);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), "gh api --method PATCH repos/owner/repo/issues/comments/13 "));
  EXPECT_FALSE(Contains(Log(), "gh api user"));
  // Not a login: refused before any call (it is spliced into a jq filter).
  app["PERFWARDEN_COMMENT_AUTHOR"] = "x\") or true or (\"";
  std::ofstream(dir_ / "log", std::ios::trunc);
  EXPECT_EQ(Bash(script, app).exit_code, 2);
  EXPECT_EQ(Log(), "");
  // The action hands its comment-author input to the script.
  fs::remove(dir_ / "user.json");
  std::ofstream(dir_ / "log", std::ios::trunc);
  o = RunAction({{"token", "t"}, {"comment-author", "perf-app[bot]"}},
                {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "3"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), "gh api --method PATCH repos/owner/repo/issues/comments/13 "));
}

}  // namespace
}  // namespace perfwarden
