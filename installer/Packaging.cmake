# Install rules and CPack packages (DEB, TGZ) for Strata: the desktop app, strata-cli (its rule
# is in engine/cli), the bundled tiny model, a .desktop file, icons and AppStream metainfo.
#   cmake --build build && cmake --build build --target package    -> build/strata_*.deb, *.tar.gz
# Included from the top-level CMakeLists.txt after the targets exist.
include(GNUInstallDirs)

set(STRATA_APP_ID io.strata.Strata)
set(_installer_dir ${PROJECT_SOURCE_DIR}/installer)

# The tiny model goes where app/shell/model_location.cpp looks for it from the executable:
# bin/../share/strata/models/strata-tiny. Its training log stays in the source tree.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/models/strata-tiny/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/strata/models/strata-tiny
  PATTERN train_log.txt EXCLUDE)

if(TARGET strata)
  install(TARGETS strata RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${_installer_dir}/${STRATA_APP_ID}.desktop
    DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${_installer_dir}/${STRATA_APP_ID}.metainfo.xml
    DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES ${_installer_dir}/strata.svg
    DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps
    RENAME ${STRATA_APP_ID}.svg)

  # PNG sizes rendered from the SVG at build time (librsvg2-bin; tools/dev.sh installs it).
  find_program(RSVG_CONVERT rsvg-convert)
  if(NOT RSVG_CONVERT)
    message(FATAL_ERROR "rsvg-convert not found: install Debian's librsvg2-bin (tools/dev.sh "
                        "does), or configure with -DSTRATA_BUILD_APP=OFF")
  endif()
  set(_icon_pngs)
  foreach(size 48 128 256)
    set(_png ${CMAKE_CURRENT_BINARY_DIR}/installer/icons/${size}x${size}/${STRATA_APP_ID}.png)
    add_custom_command(OUTPUT ${_png}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/installer/icons/${size}x${size}
      COMMAND ${RSVG_CONVERT} -w ${size} -h ${size} -o ${_png} ${_installer_dir}/strata.svg
      DEPENDS ${_installer_dir}/strata.svg
      COMMENT "Rendering the ${size}x${size} icon")
    install(FILES ${_png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
    list(APPEND _icon_pngs ${_png})
  endforeach()
  add_custom_target(strata_icons ALL DEPENDS ${_icon_pngs})
endif()

set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_PACKAGE_NAME strata)
set(CPACK_PACKAGE_VENDOR "Strata")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Strata maintainers <maintainers@strata.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Chat with large mixture-of-experts models on your own machine")
set(CPACK_PACKAGE_DESCRIPTION
  "Strata runs GLM-5-class mixture-of-experts models locally, streaming experts between GPU \
memory, RAM and disk. It ships the desktop app (strata), the command-line tool and \
OpenAI-compatible server (strata-cli), and a small bundled model to chat with at once.")
set(CPACK_PACKAGE_FILE_NAME "strata-${PROJECT_VERSION}-Linux-${CMAKE_SYSTEM_PROCESSOR}")
set(CPACK_STRIP_FILES ON)
set(CPACK_THREADS 0)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # strata_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What dpkg-shlibdeps cannot see, all for the app (strata-cli has no Qt): the QML modules the
# UI imports (loaded by path at run time, with what they pull in) and Qt SQL's SQLite driver (a
# plugin). Keep in step with qml/*.qml's imports and tools/dev.sh's package list.
set(_runtime_depends)
if(TARGET strata)
  list(APPEND _runtime_depends libqt6sql6-sqlite
    qml6-module-qtqml qml6-module-qtqml-models qml6-module-qtqml-workerscript
    qml6-module-qtquick qml6-module-qtquick-window qml6-module-qtquick-controls
    qml6-module-qtquick-templates qml6-module-qtquick-layouts qml6-module-qtquick-dialogs
    # QtQuick.Dialogs' non-native file dialog (used without a platform dialog) imports it.
    qml6-module-qt-labs-folderlistmodel)
endif()
list(JOIN _runtime_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)

include(CPack)
