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
