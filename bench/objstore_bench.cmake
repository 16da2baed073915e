# objstore_bench: WarmCache vs a sequential copy from s3rver (included from bench/CMakeLists.txt).
if(DLJOB_BUILD_TESTS AND TARGET dljob_objstore)
  add_executable(objstore_bench objstore_bench.cc
    ${PROJECT_SOURCE_DIR}/storage/objstore/testing/s3rver_process.cc
    ${PROJECT_SOURCE_DIR}/tests/support/command.cc)
  target_link_libraries(objstore_bench PRIVATE dljob_objstore)
  target_compile_definitions(objstore_bench PRIVATE
    DLJOB_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}"
    DLJOB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
