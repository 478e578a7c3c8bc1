# `cmake --install build [--prefix DIR]`: public headers, the static libraries, the `dpmu` command,
# a CMake package (find_package(dpmu CONFIG) gives dpmu::core, dpmu::data, dpmu::runtime, dpmu::api)
# and a pkg-config file dpmu.pc. Tested by tests/consumer/ (ctest -R install).
include(CMakePackageConfigHelpers)

set_target_properties(dpmu_core PROPERTIES EXPORT_NAME core)
set_target_properties(dpmu_data PROPERTIES EXPORT_NAME data)
set_target_properties(dpmu_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(dpmu_api PROPERTIES EXPORT_NAME api)
set_target_properties(dpmu_ledger PROPERTIES EXPORT_NAME ledger)
set_target_properties(dpmu_simulation PROPERTIES EXPORT_NAME simulation)

set(DPMU_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/dpmu)

install(TARGETS dpmu_core dpmu_data dpmu_ledger dpmu_runtime dpmu_simulation dpmu_api EXPORT dpmuTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS dpmu RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir engine/core/include engine/runtime/include engine/api/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/dpmu DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(EXPORT dpmuTargets NAMESPACE dpmu:: DESTINATION ${DPMU_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/dpmuConfig.cmake.in ${PROJECT_BINARY_DIR}/dpmuConfig.cmake
                              INSTALL_DESTINATION ${DPMU_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dpmuConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/dpmuConfig.cmake ${PROJECT_BINARY_DIR}/dpmuConfigVersion.cmake
        DESTINATION ${DPMU_INSTALL_CMAKEDIR})

# pkg-config: one package with every library and the link flags of their dependencies
# (static libraries: a consumer links the dependencies itself).
set(DPMU_PC_LIBS "")
foreach(lib ${HDF5_CXX_LIBRARIES} ${LIBCSV_LIBRARY})
  string(APPEND DPMU_PC_LIBS " ${lib}")
endforeach()
set(DPMU_PC_CFLAGS "")
foreach(dir ${HDF5_INCLUDE_DIRS} ${RANDOM123_INCLUDE_DIR})
  if(NOT dir STREQUAL "/usr/include")  # a default include dir; -isystem on it breaks #include_next
    string(APPEND DPMU_PC_CFLAGS " -isystem ${dir}")
  endif()
endforeach()
# Relocatable: the prefix is found from the .pc file's own folder, so `--prefix` at install time works.
file(RELATIVE_PATH DPMU_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" DPMU_PC_TO_PREFIX "${DPMU_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/dpmu.pc.in ${PROJECT_BINARY_DIR}/dpmu.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dpmu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
