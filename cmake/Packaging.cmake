# What `cmake --install` puts where, and the Debian package CPack builds from it
# (docs/packaging.md). The package reuses the build tree's binary: `cpack -G DEB` in a build
# directory packs what that build made (the release preset for a package to ship).
include(GNUInstallDirs)
install(TARGETS gpuwarden RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# serve, watch, check and the Slurm hooks (src/cli_http), where the binary looks for them.
install(TARGETS gw_cli_http LIBRARY DESTINATION lib/gpuwarden)
# The fake NVML and the scenarios, where `--demo` looks for them beside an installed binary
# (src/sources/gpu_source.cpp): bin/../lib/gpuwarden and bin/../share/gpuwarden/scenarios.
install(TARGETS gw_fake_nvml_current LIBRARY DESTINATION lib/gpuwarden)
install(DIRECTORY scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuwarden/scenarios)
install(FILES packaging/systemd/gpuwarden.service DESTINATION lib/systemd/system)
# A conffile (packaging/deb/conffiles): dpkg keeps an admin's edits across upgrades.
install(FILES packaging/gpuwarden.toml DESTINATION /etc/gpuwarden)
install(DIRECTORY packaging/prometheus packaging/grafana packaging/slurm USE_SOURCE_PERMISSIONS
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gpuwarden)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuwarden)
set(CPACK_PACKAGE_VENDOR "gpuwarden")
set(CPACK_PACKAGE_CONTACT "gpuwarden maintainers <gpuwarden@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU server health: diagnosis, monitoring daemon, job queue, Slurm checks")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcurl is dlopen'ed by webhook and Alertmanager sinks (src/alert/curl_library.h), so the
# shlibs scan does not see it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS libcurl4)
# Nor SQLite, dlopen'ed by the first database opened (src/store/sqlite_library.h): the history
# and the queue need it, so it is a dependency (3.20: sqlite3_prepare_v3).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libsqlite3-0 (>= 3.20)")
# Debug info stays in the build tree; the package carries stripped binaries.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/deb/conffiles ${PROJECT_SOURCE_DIR}/packaging/deb/postinst
    ${PROJECT_SOURCE_DIR}/packaging/deb/prerm ${PROJECT_SOURCE_DIR}/packaging/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
