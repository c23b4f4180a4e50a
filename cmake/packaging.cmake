# SPDX-License-Identifier: Apache-2.0
# Install rules and Debian packages (CPack). Two components, one package each:
#   runner -> perfwarden         /usr/bin/perfwarden, its man page, the user docs
#   server -> perfwarden-server  /usr/bin/perfwarden-server (the dashboard is built in), its man page,
#                              /etc/perfwarden/server.yaml (conffile), the systemd unit, the
#                              operator docs; postinst makes the perfwarden user, /var/lib/perfwarden
#                              and the admin token in /etc/perfwarden/server.env
# `cmake --build --preset release --target package` writes both .deb files to
# <build>/packages/. Runtime dependencies come from dpkg-shlibdeps. docs/operations.md, "Install".
include(GNUInstallDirs)

set(pkg_dir "${PROJECT_SOURCE_DIR}/packaging")
set(doc_runner "${CMAKE_INSTALL_DATADIR}/doc/perfwarden")
set(doc_server "${CMAKE_INSTALL_DATADIR}/doc/perfwarden-server")

install(TARGETS perfwarden RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runner)
install(TARGETS perfwarden-server RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)

install(FILES README.md docs/cli.md docs/config.md docs/ci.md docs/statistics.md docs/gpu.md
              docs/bisect.md config/perfwarden.example.yaml
        DESTINATION ${doc_runner} COMPONENT runner)
install(DIRECTORY ci/github ci/gitlab DESTINATION ${doc_runner}/ci COMPONENT runner)
install(FILES docs/operations.md docs/config.md docs/api.md docs/reliability.md
              docs/dashboards.md docs/history.md
        DESTINATION ${doc_server} COMPONENT server)
install(FILES packaging/examples/nginx-perfwarden.conf DESTINATION ${doc_server}/examples
        COMPONENT server)
# The licence: copyright (DEP-5: perfwarden's Apache-2.0, whose full text Debian keeps in
# /usr/share/common-licenses/Apache-2.0, and the licences of what is compiled in) and NOTICE.
install(FILES packaging/deb/copyright NOTICE DESTINATION ${doc_runner} COMPONENT runner)
install(FILES packaging/deb/copyright NOTICE DESTINATION ${doc_server} COMPONENT server)
# The schema migrations, found beside the installed program (MigratorOptions::
# DefaultMigrationsDir): the server needs no build tree.
install(DIRECTORY migrations/ DESTINATION ${CMAKE_INSTALL_DATADIR}/perfwarden-server/migrations
        COMPONENT server FILES_MATCHING PATTERN "*.sql")

# System paths of the service, absolute whatever the prefix: the unit names them.
install(FILES ${pkg_dir}/server.yaml DESTINATION /etc/perfwarden COMPONENT server)
install(FILES ${pkg_dir}/perfwarden-server.service DESTINATION /lib/systemd/system
        COMPONENT server)

# Man pages from each program's --help (help2man) and a Debian changelog naming the package
# version, both made at install time (so they describe the binaries being installed).
find_program(PERFWARDEN_HELP2MAN help2man)
foreach(pair "perfwarden|runner|perfwarden|CI performance-regression gate: measure, gate, bisect"
             "perfwarden-server|server|perfwarden-server|CI performance-regression gate: the server")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 program)
  list(GET pair 1 component)
  list(GET pair 2 package)
  list(GET pair 3 summary)
  install(CODE "
    include(\"${PROJECT_SOURCE_DIR}/cmake/package_version.cmake\")
    perfwarden_package_version(\"${PROJECT_SOURCE_DIR}\" \"${PROJECT_VERSION}\" version)
    set(out \"${CMAKE_BINARY_DIR}/packaging/${package}\")
    file(MAKE_DIRECTORY \"\${out}\")
    if(\"${PERFWARDEN_HELP2MAN}\" STREQUAL \"PERFWARDEN_HELP2MAN-NOTFOUND\")
      message(FATAL_ERROR \"help2man is needed for the man pages: apt-get install help2man\")
    endif()
    execute_process(COMMAND \"${PERFWARDEN_HELP2MAN}\" --no-info --no-discard-stderr
                            --name \"${summary}\" --version-string \"\${version}\"
                            --output \"\${out}/${program}.1\" \"$<TARGET_FILE:${program}>\"
                    RESULT_VARIABLE failed)
    if(failed)
      message(FATAL_ERROR \"help2man ${program} failed\")
    endif()
    execute_process(COMMAND gzip -9nf \"\${out}/${program}.1\" RESULT_VARIABLE failed)
    string(TIMESTAMP date \"%a, %d %b %Y %H:%M:%S +0000\" UTC)
    if(DEFINED ENV{SOURCE_DATE_EPOCH})
      set(date \"Thu, 01 Jan 1970 00:00:00 +0000\")
    endif()
    file(WRITE \"\${out}/changelog\" \"${package} (\${version}) unstable; urgency=medium\\n\\n  * Built from perfwarden's git tree: its history lists the changes.\\n\\n -- perfwarden maintainers <maintainers@users.noreply.a-seed-4b8be793.example>  \${date}\\n\")
    execute_process(COMMAND gzip -9nf \"\${out}/changelog\" RESULT_VARIABLE failed)
    file(INSTALL \"\${out}/${program}.1.gz\"
         DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}/man1\")
    file(INSTALL \"\${out}/changelog.gz\"
         DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/doc/${package}\")
  " COMPONENT ${component})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME perfwarden)
set(CPACK_PACKAGE_VENDOR perfwarden)
set(CPACK_PACKAGE_CONTACT "perfwarden maintainers <maintainers@users.noreply.a-seed-4b8be793.example>")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/perfwarden/perfwarden")
set(CPACK_PACKAGE_DIRECTORY "${CMAKE_BINARY_DIR}/packages")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runner server)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_DEBIAN_RUNNER_PACKAGE_NAME perfwarden)
set(CPACK_DEBIAN_SERVER_PACKAGE_NAME perfwarden-server)
set(CPACK_DEBIAN_RUNNER_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_SERVER_PACKAGE_SECTION net)
# The embedded PostgreSQL (the default configuration) runs the server's own initdb and pg_ctl.
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "postgresql-15 | postgresql (>= 15), passwd")
set(CPACK_DEBIAN_RUNNER_PACKAGE_SUGGESTS "perfwarden-server")
set(CPACK_DEBIAN_SERVER_PACKAGE_SUGGESTS "perfwarden, nginx | caddy")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    "${pkg_dir}/deb/perfwarden-server/postinst;${pkg_dir}/deb/perfwarden-server/prerm;${pkg_dir}/deb/perfwarden-server/postrm;${pkg_dir}/deb/perfwarden-server/conffiles")
set(CPACK_COMPONENT_RUNNER_DESCRIPTION
   "CI performance-regression gate: the runner
perfwarden runs Google Benchmark binaries, commands and CUDA training
benchmarks, posts every repetition to a perfwarden server, and fails a pull
request that makes them slower than their threshold with statistical
confidence (paired side-by-side measurement on the CI runner, or the server's
Welch verdict). It also bisects a regression to its commit.")
set(CPACK_COMPONENT_SERVER_DESCRIPTION
   "CI performance-regression gate: the server
perfwarden-server stores benchmark runs in PostgreSQL (its own embedded
cluster under /var/lib/perfwarden by default, or an external one), judges pull
requests (Welch t-tests with Holm correction, paired verdicts), watches the
main branch's history for change points, and serves the REST API and the
dashboard. Runs as the systemd service perfwarden-server.")
# The version is read when cpack runs (cmake/cpack_project.cmake), not now.
set(CPACK_PERFWARDEN_SOURCE_DIR "${PROJECT_SOURCE_DIR}")
set(CPACK_PERFWARDEN_FALLBACK_VERSION "${PROJECT_VERSION}")
set(CPACK_PROJECT_CONFIG_FILE "${PROJECT_SOURCE_DIR}/cmake/cpack_project.cmake")
include(CPack)
