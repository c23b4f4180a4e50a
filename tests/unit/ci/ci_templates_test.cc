// Keeps the CI templates honest without GitHub or GitLab: the YAML files have the parts CI needs,
// every perfgate flag they (and docs/ci.md) pass is one `perfgate <verb> --help` lists, and their
// shell runs, as the CI would run it, against stand-ins for perfgate, gh and curl (no network):
// the gate's exit code becomes the job's, and the comment is updated by its marker or created.
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

#include "tests/testing/shell.h"

namespace perfgate {
namespace {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::string>;

// The repository: PERFGATE_FIXTURES_DIR is <source>/tests/fixtures.
fs::path Src(const std::string& relative) {
  return fs::path(PERFGATE_FIXTURES_DIR).parent_path().parent_path() / relative;
}
const char kMarker[] = "<!-- perfgate:gate project=demo testbed=ci-x86 -->";

using Outcome = perfgate::testing::ShellOutcome;

Outcome Shell(const std::string& command) { return perfgate::testing::RunShell(command); }

std::string Read(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool HaveJq() { return Shell("command -v jq").exit_code == 0; }

// Whether `part` is in `text`; either way the message shows the text.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  return (text.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure())
         << "\"" << part << "\" in:\n"
         << text;
}

// The options a verb's --help lists (lines that start with an option, as CLI11 prints them).
std::set<std::string> HelpFlags(const std::string& verb) {
  Outcome help = Shell(std::string(PERFGATE_BIN_DIR) + "/perfgate " + verb + " --help");
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
  for (const YAML::Node& step : action["runs"]["steps"]) {
    EXPECT_EQ(step["shell"].as<std::string>(), "bash");
    scripts[step["id"].as<std::string>()] = step["run"].as<std::string>();
  }
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
  EXPECT_EQ(workflow["permissions"]["pull-requests"].as<std::string>(), "write");
  int full_checkouts = 0, gates = 0;
  for (const auto& job : workflow["jobs"]) {
    for (const YAML::Node& step : job.second["steps"]) {
      const std::string uses = step["uses"].as<std::string>("");
      // Indexing a missing key's node throws in yaml-cpp, hence IsMap() first.
      if (uses.rfind("actions/checkout@", 0) == 0 && step["with"].IsMap() &&
          step["with"]["fetch-depth"].as<int>(1) == 0) {
        ++full_checkouts;
      }
      if (uses.find("ci/github") != std::string::npos) {
        ++gates;
        EXPECT_EQ(step["with"]["token"].as<std::string>(), "${{ secrets.PERFGATE_TOKEN }}");
      }
    }
  }
  EXPECT_EQ(full_checkouts, 1);
  EXPECT_EQ(gates, 1);

  const YAML::Node gitlab = YAML::LoadFile(Src("ci/gitlab/perfgate.gitlab-ci.yml").string());
  const YAML::Node job = gitlab[".perfgate"];
  ASSERT_TRUE(job.IsMap());
  EXPECT_EQ(job["variables"]["GIT_DEPTH"].as<std::string>(), "0");
  EXPECT_EQ(job["artifacts"]["reports"]["junit"].as<std::string>(), "perfgate-junit.xml");
  EXPECT_EQ(job["artifacts"]["reports"]["metrics"].as<std::string>(), "metrics.txt");
  EXPECT_EQ(job["artifacts"]["when"].as<std::string>(), "always");
  ASSERT_EQ(job["rules"].size(), 2u);
  EXPECT_NE(job["rules"][0]["if"].as<std::string>().find("merge_request_event"), std::string::npos);
  EXPECT_NE(job["rules"][1]["if"].as<std::string>().find("CI_DEFAULT_BRANCH"), std::string::npos);
}

TEST(CiTemplatesTest, EveryPerfgateFlagIsOneTheCliAccepts) {
  std::map<std::string, std::set<std::string>> accepted;
  for (const char* verb : {"run", "gate", "push"}) accepted[verb] = HelpFlags(verb);
  ASSERT_TRUE(accepted["gate"].count("--junit")) << "is " PERFGATE_BIN_DIR "/perfgate built?";
  // A flag belongs to the verb named last before it on its line (or on the line before, when
  // that one ends in '\'): `perfgate gate`, the scripts' gate_args, PERFGATE_GATE_ARGS, args-gate.
  const std::regex verb_word(R"(^[`"]?(run|gate|push)\b)");
  const std::regex args(R"((run|gate)_args|(RUN|GATE)_ARGS|args-(run|gate))");
  const std::regex flag(R"(--[a-z][a-z0-9-]*)");
  std::set<std::string> checked;
  for (const char* file : {"ci/github/action.yml", "ci/github/workflow-example.yml",
                           "ci/gitlab/perfgate.gitlab-ci.yml", "ci/comment.sh", "docs/ci.md"}) {
    std::istringstream lines(Read(Src(file)));
    std::string verb;
    int number = 0;
    for (std::string line, previous; std::getline(lines, line); previous = line) {
      ++number;
      if (previous.empty() || previous.back() != '\\') verb.clear();
      std::istringstream words(line);
      std::smatch m;
      for (std::string word, before; words >> word; before = word) {
        if (before.size() >= 8 && before.substr(before.size() - 8) == "perfgate" &&
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
              << file << ":" << number << ": perfgate " << verb << " has no " << m.str();
        }
      }
    }
  }
  // The scanner saw the flags the templates depend on (a scanner that finds nothing passes).
  for (const char* used :
       {"gate --junit", "gate --comment-file", "gate --gitlab-metrics", "gate --rerun-inconclusive",
        "gate --require-baseline", "run --config", "run --skip-build"}) {
    EXPECT_TRUE(checked.count(used)) << used;
  }
}

// perfgate, gh and curl stand-ins that log their calls to $FAKE/log. perfgate writes the files
// gate is asked for and exits $RUN_EXIT / $GATE_EXIT; gh answers --jq from $FAKE/comments.json
// with the real jq; curl serves $FAKE/notes-<page>.json and records what is sent.
constexpr char kFakePerfgate[] = R"(#!/usr/bin/env bash
echo "perfgate $*" >>"$FAKE/log"
verb=$1; shift
[ -n "${PERFGATE_TOKEN:-}" ] || { echo "perfgate: error: PERFGATE_TOKEN is not set" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --comment-file) printf '%s\n### perfgate: **Regression**\n' "$MARKER" >"$2"; shift ;;
    --junit | --gitlab-metrics) echo report >"$2"; shift ;;
  esac
  shift
done
case $verb in run) exit "${RUN_EXIT:-0}" ;; gate) exit "${GATE_EXIT:-0}" ;; esac
exit 2
)";
constexpr char kFakeGh[] = R"(#!/usr/bin/env bash
echo "gh $*" >>"$FAKE/log"
[ "${GH_TOKEN:-}" = ghs_job ] || exit 4
prev=""
for a in "$@"; do
  [ "$prev" = --jq ] && jq -r "$a" "$FAKE/comments.json"
  case $a in body=@*) cp "${a#body=@}" "$FAKE/sent" ;; esac
  prev=$a
done
)";
constexpr char kFakeCurl[] = R"(#!/usr/bin/env bash
method=GET
while [ $# -gt 0 ]; do
  case $1 in
    -X) method=$2; shift ;;
    -o) out=$2; shift ;;
    -D) dump=$2; shift ;;
    -H) auth=$2; shift ;;
    --data-urlencode) data=$2; shift ;;
    -*) ;;
    *) url=$1 ;;
  esac
  shift
done
echo "curl $method $url" >>"$FAKE/log"
grep -qx "PRIVATE-TOKEN: glpat_x" "${auth#@}" || exit 22
if [ "$method" = GET ]; then
  page=$(echo "$url" | sed -n 's/.*[?&]page=\([0-9]*\).*/\1/p')
  cp "$FAKE/notes-$page.json" "$out" || exit 22
  next=""; [ -f "$FAKE/notes-$((page + 1)).json" ] && next=$((page + 1))
  printf 'HTTP/1.1 200 OK\r\nX-Next-Page: %s\r\n\r\n' "$next" >"$dump"
else
  cp "${data#body@}" "$FAKE/sent"
fi
)";

class CiShellTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/perfgate-ci-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "work");
    for (const auto& [name, text] : {std::pair{"perfgate", kFakePerfgate}, std::pair{"gh", kFakeGh},
                                     std::pair{"curl", kFakeCurl}}) {
      std::ofstream(dir_ / "bin" / name) << text;
      fs::permissions(dir_ / "bin" / name, fs::perms::owner_all);
    }
    std::ofstream(dir_ / "log");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::string Log() { return Read(dir_ / "log"); }

  // Runs a script in work/ with only `env` (and PATH with the stand-ins first), under bash as
  // the CI runs it: GitHub with `bash --noprofile --norc -eo pipefail`, GitLab with -eo pipefail.
  Outcome Bash(const std::string& script, Env env) {
    const fs::path file = dir_ / ("script-" + std::to_string(scripts_++) + ".sh");
    std::ofstream(file) << script;
    env["PATH"] = (dir_ / "bin").string() + ":/usr/local/bin:/usr/bin:/bin";
    env["HOME"] = env["FAKE"] = dir_.string();
    env["MARKER"] = kMarker;
    std::string command = "cd " + Quote((dir_ / "work").string()) + " && env -i";
    for (const auto& [key, value] : env) command += " " + key + "=" + Quote(value);
    return Shell(command + " bash --noprofile --norc -eo pipefail " + Quote(file.string()));
  }

  // The composite action's steps in order, each with its env's ${{ }} expressions evaluated for
  // this event, until one fails (no step has an `if:`); the last step's status is the action's.
  Outcome RunAction(const Env& with, const Env& env) {
    const YAML::Node action = YAML::LoadFile(Src("ci/github/action.yml").string());
    std::map<std::string, std::string> values = {{"github.token", "ghs_job"}};
    values["github.event.pull_request.number"] = env.count("PR") ? env.at("PR") : "";
    const std::regex expression(R"(\$\{\{\s*([^}]+?)\s*\}\})");
    const auto expand = [&](const std::string& text) {
      std::string out;
      std::sregex_iterator it(text.begin(), text.end(), expression), end;
      size_t at = 0;
      for (; it != end; ++it) {
        const std::string key = (*it)[1];
        EXPECT_TRUE(values.count(key) || key.rfind("steps.", 0) == 0) << "unknown " << key;
        out += text.substr(at, it->position() - at) + (values.count(key) ? values[key] : "");
        at = it->position() + it->length();
      }
      return out + text.substr(at);
    };
    for (const auto& input : action["inputs"]) {
      const std::string name = input.first.as<std::string>();
      values["inputs." + name] =
          with.count(name) ? with.at(name) : expand(input.second["default"].as<std::string>(""));
    }
    Outcome last;
    for (const YAML::Node& step : action["runs"]["steps"]) {
      Env step_env = env;
      step_env["GITHUB_OUTPUT"] = (dir_ / "output").string();
      step_env["GITHUB_ACTION_PATH"] = Src("ci/github").string();
      step_env["GITHUB_REPOSITORY"] = "owner/repo";
      step_env["RUNNER_TEMP"] = dir_.string();
      for (const auto& e : step["env"])
        step_env[e.first.as<std::string>()] = expand(e.second.as<std::string>(""));
      std::ofstream(dir_ / "output", std::ios::trunc);
      Outcome o = Bash(step["run"].as<std::string>(), step_env);
      last.output += o.output;
      last.exit_code = o.exit_code;
      std::ifstream outputs(dir_ / "output");
      for (std::string line; std::getline(outputs, line);) {
        const size_t eq = line.find('=');
        if (eq != std::string::npos) {
          values["steps." + step["id"].as<std::string>() + ".outputs." + line.substr(0, eq)] =
              line.substr(eq + 1);
        }
      }
      if (o.exit_code != 0) break;
    }
    outputs_ = values;
    return last;
  }

  // The GitLab template's job script with its variables: a merge request pipeline when `env`
  // sets CI_MERGE_REQUEST_IID, else a default-branch one.
  Outcome RunGitlab(Env env) {
    const YAML::Node job =
        YAML::LoadFile(Src("ci/gitlab/perfgate.gitlab-ci.yml").string())[".perfgate"];
    for (const auto& v : job["variables"])
      env.emplace(v.first.as<std::string>(), v.second.as<std::string>());
    env.emplace("CI_API_V4_URL", "https://gitlab.example/api/v4");
    env.emplace("CI_PROJECT_ID", "42");
    env.emplace("CI_COMMIT_REF_NAME", "main");
    std::string script;
    for (const YAML::Node& line : job["script"]) script += line.as<std::string>() + "\n";
    return Bash(script, env);
  }

  fs::path dir_;
  int scripts_ = 0;
  std::map<std::string, std::string> outputs_;
};

TEST_F(CiShellTest, TheActionFailsOnARegressionAndUpdatesTheMarkedComment) {
  if (!HaveJq()) GTEST_SKIP() << "the gh stand-in needs jq";
  Write("comments.json",
        std::string(R"([{"id": 5, "body": "LGTM"},)") +
            R"({"id": 6, "body": "<!-- perfgate:gate project=demo testbed=other -->"},)" +
            R"({"id": 7, "body": ")" + kMarker + R"(\nold"}])");
  Outcome o = RunAction({{"token", "pgt_secret"}},
                        {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "17"}, {"GATE_EXIT", "1"}});
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_EQ(outputs_["steps.gate.outputs.outcome"], "regression");
  EXPECT_TRUE(fs::exists(outputs_["steps.gate.outputs.junit"]));
  const std::string log = Log();
  EXPECT_TRUE(Contains(log, "gh api --method PATCH repos/owner/repo/issues/comments/7 "));
  EXPECT_FALSE(Contains(log, "--method POST"));
  EXPECT_EQ(Read(dir_ / "sent").rfind(kMarker, 0), 0u);
  EXPECT_FALSE(Contains(o.output, "pgt_secret"));
}

TEST_F(CiShellTest, TheActionPassesAndCreatesTheCommentWhenNoneHasTheMarker) {
  if (!HaveJq()) GTEST_SKIP() << "the gh stand-in needs jq";
  Write("comments.json", R"([{"id": 5, "body": "LGTM"}])");
  Outcome o = RunAction({{"token", "pgt_secret"},
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
  Outcome down = RunAction({{"token", "pgt_secret"}},
                           {{"GITHUB_EVENT_NAME", "push"}, {"RUN_EXIT", "3"}, {"GATE_EXIT", "3"}});
  EXPECT_EQ(down.exit_code, 3) << down.output;
  EXPECT_EQ(outputs_["steps.gate.outputs.outcome"], "infrastructure");
  EXPECT_TRUE(Contains(Log(), "perfgate run --config perfgate.yaml\n"));
  EXPECT_TRUE(std::regex_search(
      Log(), std::regex("perfgate gate --config perfgate.yaml --junit \\S+ "
                        "--comment-file \\S+ --color always --mode auto --rerun-inconclusive\n")))
      << Log();
  EXPECT_FALSE(Contains(Log(), "gh "));
  // A usage error in run (here: no token, as in a fork's pull request) stops before the gate.
  std::ofstream(dir_ / "log", std::ios::trunc);
  Outcome bad = RunAction({{"token", ""}}, {{"GITHUB_EVENT_NAME", "pull_request"}, {"PR", "3"}});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_EQ(outputs_["steps.run.outputs.outcome"], "error");
  EXPECT_FALSE(Contains(Log(), "perfgate gate"));
}

constexpr char kNotes[] = "https://gitlab.example/api/v4/projects/42/merge_requests/9/notes";

TEST_F(CiShellTest, TheGitlabJobGatesMergeRequestsAndUpdatesTheMarkedNote) {
  // Without PERFGATE_GITLAB_TOKEN: no note, and the gate's exit code stands.
  Outcome o =
      RunGitlab({{"CI_MERGE_REQUEST_IID", "9"}, {"PERFGATE_TOKEN", "t"}, {"GATE_EXIT", "1"}});
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_TRUE(Contains(
      Log(),
      "perfgate gate --junit perfgate-junit.xml --gitlab-metrics metrics.txt "
      "--comment-file perfgate-comment.md --color always --mode auto --rerun-inconclusive\n"));
  EXPECT_TRUE(fs::exists(dir_ / "work/perfgate-junit.xml"));
  EXPECT_TRUE(Contains(o.output, "PERFGATE_GITLAB_TOKEN"));
  EXPECT_FALSE(Contains(Log(), "curl "));

  if (!HaveJq()) GTEST_SKIP() << "the template's note needs jq";
  // The marked note is on the second page of notes: updated.
  Write("notes-1.json", R"([{"id": 1, "body": "first"}])");
  Write("notes-2.json", std::string(R"([{"id": 55, "body": ")") + kMarker + R"(\nold"}])");
  const Env mr = {
      {"CI_MERGE_REQUEST_IID", "9"}, {"PERFGATE_TOKEN", "t"}, {"PERFGATE_GITLAB_TOKEN", "glpat_x"}};
  o = RunGitlab(mr);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), std::string("curl PUT ") + kNotes + "/55\n"));
  EXPECT_EQ(Read(dir_ / "sent").rfind(kMarker, 0), 0u);
  EXPECT_FALSE(Contains(o.output, "glpat_x"));
  // No marked note: one is created.
  Write("notes-2.json", R"([])");
  o = RunGitlab(mr);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), std::string("curl POST ") + kNotes + "\n"));
}

TEST_F(CiShellTest, TheGitlabDefaultBranchJobOnlyRuns) {
  Outcome o = RunGitlab({{"PERFGATE_TOKEN", "pgt_secret"}});
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_EQ(Log(), "perfgate run\n");
  o = RunGitlab({{"PERFGATE_TOKEN", "pgt_secret"}, {"RUN_EXIT", "3"}});
  EXPECT_EQ(o.exit_code, 3) << o.output;  // allow_failure: exit_codes: [3]
}

TEST_F(CiShellTest, CommentScriptUpdatesByMarkerAndRefusesOtherBodies) {
  EXPECT_EQ(Shell("bash -n " + Quote(Src("ci/comment.sh").string())).exit_code, 0);
  if (!HaveJq()) GTEST_SKIP() << "comment.sh gitlab needs jq";
  const std::string script = "bash " + Quote(Src("ci/comment.sh").string()) + " ";
  Write("body.md", std::string(kMarker) + "\nnew\n");
  Write("notes-1.json", std::string(R"([{"id": 3, "body": ")") + kMarker + R"(\nold"}])");
  const Env gitlab = {{"PERFGATE_GITLAB_TOKEN", "glpat_x"},
                      {"CI_API_V4_URL", "https://gl/api/v4"},
                      {"CI_PROJECT_ID", "42"}};
  Outcome o = Bash(script + "gitlab ../body.md 8", gitlab);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Contains(Log(), "curl PUT https://gl/api/v4/projects/42/merge_requests/8/notes/3\n"));
  Write("plain.md", "not perfgate's\n");
  EXPECT_EQ(Bash(script + "gitlab ../plain.md 8", gitlab).exit_code, 2);
  EXPECT_EQ(Bash(script + "github ../body.md not-a-number", {{"GH_TOKEN", "ghs_job"}}).exit_code,
            2);
  EXPECT_EQ(Bash(script + "bitbucket ../body.md 1", {}).exit_code, 2);
}

}  // namespace
}  // namespace perfgate
