#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The layering check (ctest `layering_check`): fails, naming file:line and the rule, when product
# code includes a header of a layer it may not use; with a link map (written by CMake at configure
# time, cmake/perfwarden.cmake's perfwarden_write_link_map) the same rules apply to the targets' links.
#   sh cmake/check_layers.sh SOURCE_ROOT [LINK_MAP]
#
# The rules: a file (or a target's folder) matching FROM may not include (or link) what matches
# FORBIDDEN. Paths are relative to the source root; an external library is named by its include
# prefix (boost/asio, boost/beast, pqxx, yaml-cpp/, git2, curl/, spdlog/).
# FROM                              FORBIDDEN                                             RULE
RULES='
^server/                            ^runner/                                              server/ never uses runner/
^runner/                            ^server/                                              runner/ never uses server/
^(core|wire|stats|judge|bisect)/    ^(boost/(asio|beast)|pqxx|yaml-cpp/|git2|curl/|spdlog/)  core/, wire/, stats/, judge/ and bisect/ use no I/O library
^(wire|stats|judge|bisect)/         ^(config|net|server|runner)/                          wire/, stats/, judge/ and bisect/ never use config/, net/, server/ or runner/
^stats/                             ^(judge|bisect)/                                      stats/ sits below judge/ and bisect/
^core/                              ^(wire|stats|judge|bisect|net|config|server|runner)/  core/ uses only core/
^config/                            ^(server|runner)/                                     config/ never uses server/ or runner/
^net/                               ^(server|runner)/                                     net/ never uses server/ or runner/
^server/store/                      ^server/(api|auth|bisect|gate|history|http|web)/      server/store/ uses no other server/ folder
^tests/unit/(core|wire|stats|bisect)/ ^(boost/(asio|beast)|pqxx|yaml-cpp/|git2|curl/|spdlog/)  tests of core/, wire/, stats/ and bisect/ use no I/O library
^tests/unit/(core|wire|stats|bisect)/ ^(config|net|server|runner)/                        tests of core/, wire/, stats/ and bisect/ never use config/, net/, server/ or runner/
^tests/unit/stats/                  ^(wire|judge|bisect)/                                 tests of stats/ include only stats/, core/ and tests/testing/
^tests/unit/server/                 ^runner/                                              tests of server/ never use runner/
^tests/unit/runner/                 ^server/                                              tests of runner/ never use server/
'
# The folders whose #include lines are checked: the product, and the unit tests (their rules
# above; tests/pg, tests/e2e and bench/ may use every layer).
LAYERS='core wire stats judge bisect net config server runner tests/unit'

set -eu
root=${1:?usage: check_layers.sh SOURCE_ROOT [LINK_MAP]}
links=${2:-}
cd "$root"

dirs=''
for d in $LAYERS; do
  if [ -d "$d" ]; then dirs="$dirs $d"; fi
done
# shellcheck disable=SC2086  # the folder names are single words
files=$(find $dirs -type f \( -name '*.h' -o -name '*.cc' \) | sort)
if [ -n "$links" ] && [ ! -f "$links" ]; then
  echo "layering check: no link map at $links (configure the build first)" >&2
  exit 2
fi

# shellcheck disable=SC2086  # file names are single words
awk -v rules="$RULES" -v links="$links" '
  BEGIN {
    n = 0
    count = split(rules, lines, "\n")
    for (i = 1; i <= count; i++) {
      if (split(lines[i], f, " ") < 3) continue
      n++; from[n] = f[1]; forbidden[n] = f[2]
      text = lines[i]
      sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]+/, "", text)
      rule[n] = text
    }
    # External libraries as the links name them, mapped to their include prefixes.
    lib["CURL::libcurl"] = "curl/"; lib["PkgConfig::PQXX"] = "pqxx/"
    lib["yaml-cpp"] = "yaml-cpp/"; lib["yaml-cpp::yaml-cpp"] = "yaml-cpp/"
    lib["PkgConfig::LIBGIT2"] = "git2/"; lib["spdlog::spdlog"] = "spdlog/"
    violations = 0; checked_files = 0; checked_links = 0
  }
  function check(where, what, shown,    i) {
    for (i = 1; i <= n; i++) {
      if (where ~ from[i] && what ~ forbidden[i]) {
        print where ": " shown ": " rule[i]
        violations++
      }
    }
  }
  links != "" && FILENAME == links {
    # A link: "<folder>/CMakeLists.txt <target> <folder or name> <dependency>".
    checked_links++
    dep = ($3 in lib) ? lib[$3] : $3
    check($1, dep, $2 " links " $4 ($3 == $4 ? "" : " (" $3 ")"))
    next
  }
  FNR == 1 { checked_files++ }
  /^[ \t]*#[ \t]*include[ \t]*[<"]/ {
    header = $0
    sub(/^[ \t]*#[ \t]*include[ \t]*[<"]/, "", header)
    sub(/[>"].*$/, "", header)
    check(FILENAME ":" FNR, header, "includes " header)
  }
  END {
    if (violations > 0) {
      print "layering check: " violations " violation(s) (rules: cmake/check_layers.sh)"
      exit 1
    }
    print "layering check: ok (" checked_files " files, " checked_links " links)"
  }
' $links $files
