# SPDX-License-Identifier: Apache-2.0
# CPACK_PROJECT_CONFIG_FILE: read by cpack when it runs (`--target package`), not at configure
# time, so the packages carry the version of the tree as it is now, however long ago the build
# directory was configured.
include("${CPACK_PERFWARDEN_SOURCE_DIR}/cmake/package_version.cmake")
perfwarden_package_version("${CPACK_PERFWARDEN_SOURCE_DIR}" "${CPACK_PERFWARDEN_FALLBACK_VERSION}" version)
set(CPACK_PACKAGE_VERSION "${version}")
set(CPACK_DEBIAN_PACKAGE_VERSION "${version}")
