// SPDX-License-Identifier: Apache-2.0
// The CI templates' shell as the CI would run it, without GitHub or GitLab: stand-ins for
// perfwarden, gh and curl (no network) that log their calls, and a fixture that runs the GitHub
// action's steps or the GitLab job's script with only the environment the CI would give them.
// Shared by ci_templates_test.cc and ci_runner_download_test.cc.
#pragma once

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/testing/fake_gh.h"
#include "tests/testing/shell.h"

namespace perfwarden::ci_test {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::string>;

// The repository: PERFWARDEN_FIXTURES_DIR is <source>/tests/fixtures.
inline fs::path Src(const std::string& relative) {
  return fs::path(PERFWARDEN_FIXTURES_DIR).parent_path().parent_path() / relative;
}
inline constexpr char kMarker[] = "<!-- perfwarden:gate project=demo testbed=ci-x86 -->";

using Outcome = perfwarden::testing::ShellOutcome;

inline Outcome Shell(const std::string& command) { return perfwarden::testing::RunShell(command); }

inline std::string Read(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

inline std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline bool HaveJq() { return Shell("command -v jq").exit_code == 0; }

// Whether `part` is in `text`; either way the message shows the text.
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  return (text.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure())
         << "\"" << part << "\" in:\n"
         << text;
}

// perfwarden, gh (tests/testing/fake_gh.h) and curl stand-ins that log their calls to $FAKE/log.
// perfwarden writes the files gate and publish are asked for and exits $RUN_EXIT / $GATE_EXIT /
// $PUBLISH_EXIT, writing the token it was given to $FAKE/token; curl serves GitLab's /user from
// $FAKE/gitlab-user.json and $FAKE/notes-<page>.json and records what is sent, GitHub release
// assets from $FAKE/github/ (404 for the others) and hands file:// URLs to the real curl.
inline constexpr char kFakePerfwarden[] = R"(#!/usr/bin/env bash
echo "perfwarden $*" >>"$FAKE/log"
printf '%s' "${PERFWARDEN_TOKEN:-}" >"$FAKE/token"
verb=$1; shift
[ -n "${PERFWARDEN_TOKEN:-}" ] || { echo "perfwarden: error: PERFWARDEN_TOKEN is not set" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --comment-file) printf '%s\n### perfwarden: **Regression**\n' "$MARKER" >"$2"; shift ;;
    --junit | --gitlab-metrics) echo report >"$2"; shift ;;
    --baseline-cache) mkdir -p "$2" && echo entry >"$2/entry"; shift ;;
  esac
  shift
done
case $verb in
  run) exit "${RUN_EXIT:-0}" ;;
  gate) exit "${GATE_EXIT:-0}" ;;
  publish) exit "${PUBLISH_EXIT:-0}" ;;
esac
exit 2
)";
using perfwarden::testing::kFakeGh;
inline constexpr char kFakeCurl[] = R"(#!/usr/bin/env bash
args=("$@")
method=GET
while [ $# -gt 0 ]; do
  case $1 in
    -X) method=$2; shift ;;
    -o) out=$2; shift ;;
    -D) dump=$2; shift ;;
    -H) auth=$2; shift ;;
    --data-urlencode) data=$2; shift ;;
    -w | --retry | --retry-delay | --connect-timeout) shift ;;
    -*) ;;
    *) url=$1 ;;
  esac
  shift
done
echo "curl $method $url" >>"$FAKE/log"
case $url in
  file://*) exec /usr/bin/curl "${args[@]}" ;;
  https://github.com/*)
    asset=$FAKE/github/${url#https://github.com/}
    [ -f "$asset" ] || { printf 404; exit 22; }
    cp "$asset" "$out" && printf 200 && exit 0 ;;
esac
grep -qx "PRIVATE-TOKEN: glpat_x" "${auth#@}" || exit 22
if [ "$method" = GET ] && [ "${url%/user}" != "$url" ]; then
  cp "$FAKE/gitlab-user.json" "$out" || exit 22
elif [ "$method" = GET ]; then
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
    char pattern[] = "/tmp/perfwarden-ci-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "work");
    for (const auto& [name, text] : {std::pair{"perfwarden", kFakePerfwarden},
                                     std::pair{"gh", kFakeGh}, std::pair{"curl", kFakeCurl}}) {
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
  // this event, until one fails; the last step's status is the action's. A step that uses another
  // action (actions/cache) is not run: it is recorded in used_ (its id, then its `with:`
  // evaluated), and its outputs are those the test put in uses_outputs_ ("steps.ID.outputs.K").
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
    for (const auto& [key, value] : uses_outputs_) values[key] = value;
    used_.clear();
    Outcome last;
    // The `if:`s the steps have: terms NAME == 'VALUE' or NAME != 'VALUE' joined by &&, NAME an
    // input or a step's output (GitHub adds success(), which the loop's break on a failed step
    // stands for).
    const std::regex term(
        R"(^(inputs\.[a-z-]+|steps\.[a-z-]+\.outputs\.[a-z-]+) (==|!=) '([a-z]*)'$)");
    const auto holds = [&](const std::string& text) {
      bool all = true;
      size_t at = 0;
      for (;;) {
        const size_t and_at = text.find(" && ", at);
        const std::string part =
            text.substr(at, and_at == std::string::npos ? and_at : and_at - at);
        std::smatch m;
        if (!std::regex_match(part, m, term)) {
          ADD_FAILURE() << "an if: the test cannot evaluate: " << text;
          return false;
        }
        all = all && ((values[m[1].str()] == m[3].str()) == (m[2].str() == "=="));
        if (and_at == std::string::npos) return all;
        at = and_at + 4;
      }
    };
    for (const YAML::Node& step : action["runs"]["steps"]) {
      if (step["if"] && !holds(step["if"].as<std::string>())) continue;
      if (step["uses"]) {
        Env used = {{"id", step["id"].as<std::string>()}};
        for (const auto& w : step["with"])
          used[w.first.as<std::string>()] = expand(w.second.as<std::string>(""));
        used_.push_back(used);
        continue;
      }
      Env step_env = env;
      step_env["GITHUB_OUTPUT"] = (dir_ / "output").string();
      step_env["GITHUB_ACTION_PATH"] = Src("ci/github").string();
      step_env["GITHUB_REPOSITORY"] = "owner/repo";
      step_env["RUNNER_TEMP"] = dir_.string();
      step_env["GITHUB_PATH"] = (dir_ / "github_path").string();
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
        YAML::LoadFile(Src("ci/gitlab/perfwarden.gitlab-ci.yml").string())[".perfwarden"];
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
  std::vector<Env> used_;  // RunAction: the steps that use other actions, as evaluated
  Env uses_outputs_;       // RunAction: those steps' outputs
};

}  // namespace perfwarden::ci_test
