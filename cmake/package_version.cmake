# SPDX-License-Identifier: Apache-2.0
# perfwarden_package_version(SOURCE_DIR FALLBACK OUT): the Debian package version of the tree at
# SOURCE_DIR, from git: a release tag vX.Y.Z gives X.Y.Z, N commits after it X.Y.Z+N.gHASH, and
# with no tag FALLBACK~gitN.gHASH (N: commits in HEAD's history), so that every later commit of
# a branch sorts higher (apt upgrades in order) and a first tagged release sorts above the
# untagged builds before it. A dirty tree adds ".dirty"; no git: FALLBACK. Shared by CPack
# (cmake/cpack_project.cmake) and the install step that writes the changelog.
function(perfwarden_package_version source_dir fallback out)
  set(version "${fallback}")
  find_program(PERFWARDEN_GIT git)
  if(PERFWARDEN_GIT AND EXISTS "${source_dir}/.git")
    execute_process(COMMAND "${PERFWARDEN_GIT}" -C "${source_dir}" describe --tags --long
                            --match "v[0-9]*" --dirty=.dirty
                    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE no_tag ERROR_QUIET)
    if(NOT no_tag AND described MATCHES "^v([0-9][0-9A-Za-z.]*)-([0-9]+)-g([0-9a-f]+)(\\.dirty)?$")
      if(CMAKE_MATCH_2 EQUAL 0)
        set(version "${CMAKE_MATCH_1}${CMAKE_MATCH_4}")
      else()
        set(version "${CMAKE_MATCH_1}+${CMAKE_MATCH_2}.g${CMAKE_MATCH_3}${CMAKE_MATCH_4}")
      endif()
    else()
      execute_process(COMMAND "${PERFWARDEN_GIT}" -C "${source_dir}" rev-list --count HEAD
                      OUTPUT_VARIABLE count OUTPUT_STRIP_TRAILING_WHITESPACE
                      RESULT_VARIABLE failed ERROR_QUIET)
      execute_process(COMMAND "${PERFWARDEN_GIT}" -C "${source_dir}" describe --always
                              --abbrev=7 --dirty=.dirty
                      OUTPUT_VARIABLE hash OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(NOT failed AND count MATCHES "^[0-9]+$" AND hash MATCHES "^[0-9a-f]+(\\.dirty)?$")
        set(version "${fallback}~git${count}.g${hash}")
      endif()
    endif()
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()
