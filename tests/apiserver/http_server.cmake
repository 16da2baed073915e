# The test API server's HTTP/1.1 front end (http_server.h), on POSIX sockets; included from
# CMakeLists.txt. It depends only on the seam in http.h, not on the REST layer.
add_library(dljob_http_server STATIC
  ${CMAKE_CURRENT_LIST_DIR}/http_connection.cc
  ${CMAKE_CURRENT_LIST_DIR}/http_server.cc
  ${CMAKE_CURRENT_LIST_DIR}/http_util.cc
)
find_package(Threads REQUIRED)
target_link_libraries(dljob_http_server PUBLIC Threads::Threads)

add_executable(http_server_test
  ${CMAKE_CURRENT_LIST_DIR}/http_server_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/http_test_client.cc
  ${CMAKE_CURRENT_LIST_DIR}/http_util_test.cc
)
target_link_libraries(http_server_test PRIVATE dljob_http_server GTest::gtest_main)
gtest_discover_tests(http_server_test WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                     PROPERTIES TIMEOUT 120)

# dljob-test-apiserver: RestHandler (dljob_test_apiserver) served over HttpServer, and stock
# kubectl driven against it.
if(TARGET dljob_test_apiserver AND EXISTS ${CMAKE_CURRENT_LIST_DIR}/rest_handler.h)
  add_executable(dljob-test-apiserver ${CMAKE_CURRENT_LIST_DIR}/test_apiserver_main.cc)
  target_link_libraries(dljob-test-apiserver PRIVATE dljob_test_apiserver dljob_http_server
                        CLI11::CLI11)

  add_executable(kubectl_e2e_test
    ${CMAKE_CURRENT_LIST_DIR}/kubectl_e2e_test.cc
    ${PROJECT_SOURCE_DIR}/tests/support/command.cc
  )
  target_link_libraries(kubectl_e2e_test PRIVATE nlohmann_json::nlohmann_json GTest::gtest_main)
  target_compile_definitions(kubectl_e2e_test PRIVATE
    DLJOB_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}"
    DLJOB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_dependencies(kubectl_e2e_test dljob-test-apiserver)
  gtest_discover_tests(kubectl_e2e_test WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       PROPERTIES TIMEOUT 300)
endif()
