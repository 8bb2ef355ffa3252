# CPack configuration for vouch's .deb (scripts/release.sh runs `cpack --config` on it with
# -D VOUCH_TREE=<the staged release tree> -D CPACK_PACKAGE_VERSION=<version>). The package holds
# that tree under /opt/vouch and a link /usr/bin/vouch; it bundles every library but glibc's, so
# its only dependency is libc6 (>= the newest glibc symbol it needs: 2.30 when built on Debian 11
# by scripts/release_bullseye.sh, 2.36 on Debian 12).
if(NOT VOUCH_TREE)
  message(FATAL_ERROR "VOUCH_TREE is not set")
endif()
get_filename_component(_stage "${VOUCH_TREE}" DIRECTORY)
set(_root "${_stage}/deb-root")
file(REMOVE_RECURSE "${_root}")
file(MAKE_DIRECTORY "${_root}/opt" "${_root}/usr/bin")
file(COPY "${VOUCH_TREE}/" DESTINATION "${_root}/opt/vouch")
file(CREATE_LINK /opt/vouch/bin/vouch "${_root}/usr/bin/vouch" SYMBOLIC)
# `import vouch` in the system Python: a .pth naming the module's folder (a virtual environment
# without system site packages takes PYTHONPATH=/opt/vouch/python instead).
file(MAKE_DIRECTORY "${_root}/usr/lib/python3/dist-packages")
file(WRITE "${_root}/usr/lib/python3/dist-packages/vouch.pth" "/opt/vouch/python\n")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vouch)
set(CPACK_PACKAGE_VENDOR vouch)
set(CPACK_PACKAGE_CONTACT "vouch developers <vouch@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU benchmark numbers worth believing")
set(CPACK_PACKAGE_DESCRIPTION "vouch runs GPU benchmark commands in guarded legs, samples the GPU around each leg, refuses what cannot be believed and says why, and writes every number with its evidence.")
set(CPACK_INSTALLED_DIRECTORIES "${_root};/")
set(CPACK_PACKAGING_INSTALL_PREFIX "/")
set(CPACK_SET_DESTDIR OFF)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${VOUCH_GLIBC})")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_PACKAGE_FILE_NAME "vouch_${CPACK_PACKAGE_VERSION}_amd64")
set(CPACK_DEBIAN_FILE_NAME "vouch_${CPACK_PACKAGE_VERSION}_amd64.deb")
set(CPACK_STRIP_FILES OFF)
