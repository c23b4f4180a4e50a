// SPDX-License-Identifier: Apache-2.0
// A stand-in for GitHub's CLI `gh` (no network), for the tests that run ci/comment.sh and the
// GitHub workflows' shell: it logs each call to $FAKE/log, requires GH_TOKEN=ghs_job, answers
// `--jq FILTER` with the real jq from $FAKE/comments.json (a pull request's comments), `gh api
// repos/O/R/pulls/N --jq F` from $FAKE/pull.json and `gh api user` from $FAKE/user.json (absent:
// refused, as GitHub refuses an installation token such as GITHUB_TOKEN), and copies a body sent
// with `-F body=@FILE` to $FAKE/sent. Needs bash and jq.
#pragma once

namespace perfwarden::testing {

inline constexpr char kFakeGh[] = R"(#!/usr/bin/env bash
echo "gh $*" >>"$FAKE/log"
[ "${GH_TOKEN:-}" = ghs_job ] || exit 4
case "$1 $2" in
  "api repos/"*/pulls/*) exec jq -r "$4" "$FAKE/pull.json" ;;
esac
if [ "$1 $2" = "api user" ]; then
  [ -f "$FAKE/user.json" ] || { echo "gh: Resource not accessible by integration" >&2; exit 1; }
  exec jq -r "$4" "$FAKE/user.json"
fi
prev=""
for a in "$@"; do
  [ "$prev" = --jq ] && jq -r "$a" "$FAKE/comments.json"
  case $a in body=@*) cp "${a#body=@}" "$FAKE/sent" ;; esac
  prev=$a
done
)";

}  // namespace perfwarden::testing
