// SPDX-License-Identifier: Apache-2.0
#include "runner/client/fork_artifact.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "runner/client/sha256.h"
#include "wire/validate.h"

namespace perfwarden::client {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<std::string>& FileNames() {
  static const std::vector<std::string> names = {kArtifactRun, kArtifactPaired, kArtifactVerdict};
  return names;
}

tl::unexpected<Error> Refused(const std::string& message) {
  return InvalidArgument("the artifact is refused: " + message, "artifact");
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string PrText(const std::optional<int64_t>& pr) {
  return pr ? "#" + std::to_string(*pr) : std::string("none");
}

// `dir/name` when it is a regular file (a link is not followed) of at most `max` bytes.
Result<std::string> ReadBounded(const fs::path& dir, const std::string& name, uintmax_t max) {
  const fs::path path = dir / name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) {
      return MakeError(ErrorCode::kNotFound, "the artifact has no " + name + " in " + dir.string(),
                       "artifact");
    }
    if (error == ELOOP) return Refused(name + " is a symbolic link");
    return Refused("cannot open " + path.string() + ": " + std::strerror(error));
  }
  struct stat info {};
  std::string text;
  std::string why;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    why = name + " is not a regular file";
  } else if (static_cast<uintmax_t>(info.st_size) > max) {
    why = name + " has " + std::to_string(info.st_size) + " bytes, more than the " +
          std::to_string(max) + " allowed";
  } else {
    // Read at most max + 1 bytes: a file that grows after fstat is caught too.
    text.resize(static_cast<size_t>(max) + 1);
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) why = "cannot read " + path.string() + ": " + std::strerror(errno);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    text.resize(done);
    if (why.empty() && done > max)
      why = name + " is larger than the " + std::to_string(max) + " bytes allowed";
  }
  ::close(fd);
  if (!why.empty()) return Refused(why);
  return text;
}

// A file name the manifest may list: one of FileNames(); a name that reaches out of the
// directory is called what it is.
Result<void> CheckFileName(const std::string& name) {
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos ||
      name.find("..") != std::string::npos || name.empty() || name.front() == '.') {
    return Refused("the manifest names the file '" + name +
                   "', a path outside the artifact's directory (path traversal)");
  }
  const auto& known = FileNames();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    return Refused("the manifest names an unknown file '" + name + "'");
  }
  return {};
}

Result<ArtifactManifest> DecodeManifest(const std::string& text) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return Refused("manifest.json is not a JSON object");
  static const std::set<std::string> kKeys = {"format", "project", "run_id",         "commit",
                                              "branch", "pr",      "runner_version", "files"};
  for (const auto& [key, value] : doc.items()) {
    if (kKeys.count(key) == 0) return Refused("manifest.json has an unknown key '" + key + "'");
  }
  ArtifactManifest m;
  for (const auto& [key, out] : {std::pair<const char*, std::string*>{"format", &m.format},
                                 {"project", &m.project},
                                 {"run_id", &m.run_id},
                                 {"commit", &m.commit},
                                 {"branch", &m.branch},
                                 {"runner_version", &m.runner_version}}) {
    if (!doc.contains(key) || !doc[key].is_string()) {
      return Refused(std::string("manifest.json: '") + key + "' must be a string");
    }
    *out = doc[key].get<std::string>();
  }
  if (m.format != kArtifactFormat) {
    return Refused("manifest.json: format '" + m.format + "' is not " + kArtifactFormat);
  }
  if (!wire::IsSha(m.commit, wire::HexCase::kLower)) {
    return Refused("manifest.json: commit is not 40 lowercase hex digits");
  }
  if (doc.contains("pr")) {
    if (!doc["pr"].is_number_integer() || doc["pr"].get<int64_t>() <= 0) {
      return Refused("manifest.json: 'pr' must be a positive integer");
    }
    m.pr = doc["pr"].get<int64_t>();
  }
  if (!doc.contains("files") || !doc["files"].is_object()) {
    return Refused("manifest.json: 'files' must be an object of file name -> SHA-256");
  }
  for (const auto& [name, digest] : doc["files"].items()) {
    if (auto ok = CheckFileName(name); !ok) return tl::unexpected(ok.error());
    if (!digest.is_string() || digest.get<std::string>().size() != 64 ||
        digest.get<std::string>().find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Refused("manifest.json: the SHA-256 of " + name + " is not 64 lowercase hex digits");
    }
    m.files[name] = digest.get<std::string>();
  }
  for (const std::string& name : FileNames()) {
    if (m.files.count(name) == 0) return Refused("manifest.json does not list " + name);
  }
  return m;
}

std::string EncodeManifest(const ArtifactManifest& m) {
  json doc = {{"format", m.format},    {"project", m.project}, {"run_id", m.run_id},
              {"commit", m.commit},    {"branch", m.branch},   {"runner_version", m.runner_version},
              {"files", json(m.files)}};
  if (m.pr) doc["pr"] = *m.pr;
  return doc.dump(2) + "\n";
}

Result<void> WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return MakeError(ErrorCode::kUnavailable, "cannot write " + path.string(), "artifact");
  return {};
}

// What the manifest says against what the files hold, and both against the expectations.
Result<void> CheckAgreement(const Artifact& a, const ArtifactExpectations& expect) {
  const ArtifactManifest& m = a.manifest;
  const wire::RunUpload& run = a.run;
  if (m.run_id != run.id) return Refused("run.json is run " + run.id + ", not " + m.run_id);
  if (m.project != run.project || m.commit != run.commit.sha || m.branch != run.branch ||
      m.pr != run.ci.pr) {
    return Refused(
        "manifest.json and run.json disagree on the project, commit, branch or pull "
        "request");
  }
  if (a.verdict.run_id != run.id) {
    return Refused("verdict.json is of run " + a.verdict.run_id + ", not " + run.id);
  }
  if (a.measurement.amends) return Refused("paired.json amends a verdict; a fork's cannot");
  if (a.measurement.testbed.name != run.testbed.name) {
    return Refused("paired.json was measured on testbed " + a.measurement.testbed.name +
                   ", the run on " + run.testbed.name);
  }
  if (expect.project.empty() || run.project != expect.project) {
    return Refused("the run is of project '" + run.project + "', perfwarden.yaml's is '" +
                   expect.project + "'");
  }
  if (run.commit.sha != Lower(expect.commit)) {
    return Refused("the run is of commit " + run.commit.sha + ", the event's head commit is " +
                   expect.commit);
  }
  if (expect.pr && run.ci.pr != expect.pr) {
    return Refused("the run is of pull request " + PrText(run.ci.pr) + ", the event's is " +
                   PrText(expect.pr));
  }
  for (const std::string& branch : expect.refused_branches) {
    if (run.branch == branch) {
      return Refused("the run is of branch " + branch +
                     ", the target branch: a pull request's artifact never posts to it (the "
                     "pull request's branch must have another name)");
    }
  }
  return {};
}

}  // namespace

Result<ArtifactManifest> WriteArtifact(const fs::path& dir, const Artifact& artifact,
                                       const std::string& runner_version) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return MakeError(ErrorCode::kUnavailable, "cannot create " + dir.string() + ": " + ec.message(),
                     "artifact");
  }
  ArtifactManifest m;
  m.project = artifact.run.project;
  m.run_id = artifact.run.id;
  m.commit = artifact.run.commit.sha;
  m.branch = artifact.run.branch;
  m.pr = artifact.run.ci.pr;
  m.runner_version = runner_version;
  const std::vector<std::pair<std::string, std::string>> files = {
      {kArtifactRun, wire::EncodeRunUpload(artifact.run) + "\n"},
      {kArtifactPaired, wire::EncodePairedMeasurement(artifact.measurement) + "\n"},
      {kArtifactVerdict, wire::EncodeVerdict(artifact.verdict).dump(2) + "\n"}};
  for (const auto& [name, text] : files) {
    if (auto ok = WriteText(dir / name, text); !ok) return tl::unexpected(ok.error());
    m.files[name] = Sha256Hex(text);
  }
  if (auto ok = WriteText(dir / kArtifactManifest, EncodeManifest(m)); !ok) {
    return tl::unexpected(ok.error());
  }
  return m;
}

Result<Artifact> ReadArtifact(const fs::path& dir, const ArtifactExpectations& expect,
                              const ArtifactLimits& limits) {
  auto manifest_text = ReadBounded(dir, kArtifactManifest, limits.max_manifest_bytes);
  if (!manifest_text) return tl::unexpected(manifest_text.error());
  auto manifest = DecodeManifest(*manifest_text);
  if (!manifest) return tl::unexpected(manifest.error());
  Artifact a;
  a.manifest = std::move(*manifest);
  std::map<std::string, std::string> texts;
  for (const auto& [name, digest] : a.manifest.files) {
    auto text = ReadBounded(dir, name, limits.max_file_bytes);
    if (!text) return tl::unexpected(text.error());
    // The hash of the bytes read, which are the bytes decoded: no second read to swap them.
    if (Sha256Hex(*text) != digest) {
      return Refused(name + " does not match its SHA-256 in manifest.json (altered)");
    }
    texts[name] = std::move(*text);
  }
  auto run = wire::DecodeRunUpload(texts[kArtifactRun]);
  if (!run) return Refused("run.json: " + run.error().ToString());
  auto measurement = wire::DecodePairedMeasurement(texts[kArtifactPaired]);
  if (!measurement) return Refused("paired.json: " + measurement.error().ToString());
  auto verdict = wire::DecodeVerdict(texts[kArtifactVerdict]);
  if (!verdict) return Refused("verdict.json: " + verdict.error().ToString());
  a.run = std::move(*run);
  a.measurement = std::move(*measurement);
  a.verdict = std::move(*verdict);
  if (auto agreed = CheckAgreement(a, expect); !agreed) return tl::unexpected(agreed.error());
  return a;
}

}  // namespace perfwarden::client
