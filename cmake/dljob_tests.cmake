# Test registration. Every ctest test of dljob belongs to exactly one tier, named by its label:
#
#   unit  in-process: the test starts no other program (no mpirun, dljob, dljob-train,
#         dljob-operator, dljob-test-apiserver, s3rver, kubectl, podman, shell or other helper
#         process); loopback sockets and threads inside the test binary are fine.
#         `scripts/test.sh --fast` builds the target `unit_tests` and runs `ctest -L unit`.
#   mpi   runs under mpirun: several ranks of a test binary or of dljob-train on this machine.
#   e2e   runs whole programs as processes (the test itself, or what it starts).
#
# The opt-in labels `cluster` (a real Kubernetes) and `container` (podman images) go beside the
# tier (LABELS). Two functions register tests, and configuring fails on a test registered any
# other way (plain add_test or gtest_discover_tests), so no test can miss its tier:
#
#   dljob_add_gtest(TARGET LABEL <tier> [TEST_FILTER <gtest filter>] [<gtest_discover_tests args>])
#       gtest_discover_tests with the tier as every discovered test's label. A binary whose cases
#       belong to different tiers is registered once per tier with complementary filters, e.g.
#       TEST_FILTER "-S3StoreTest.*" (unit) and TEST_FILTER "S3StoreTest.*" (e2e).
#   dljob_add_test(NAME <name> LABEL <tier> [LABELS <opt-in>...] COMMAND ... [<add_test args>])
#       add_test with the tier (and opt-in labels) as its labels. Set other properties with
#       set_tests_properties, never LABELS (that would replace the tier).
#
# scripts/test.sh checks the built suite too: each test listed by ctest carries exactly one tier.
include_guard(GLOBAL)

set(DLJOB_TEST_TIERS unit mpi e2e)

function(_dljob_check_tier what tier)
  if(NOT tier)
    message(FATAL_ERROR "${what}: LABEL <tier> is missing; one of: ${DLJOB_TEST_TIERS} "
                        "(cmake/dljob_tests.cmake says which is which)")
  endif()
  if(NOT tier IN_LIST DLJOB_TEST_TIERS)
    message(FATAL_ERROR "${what}: LABEL ${tier} is not a tier; one of: ${DLJOB_TEST_TIERS} "
                        "(opt-in labels such as cluster go in LABELS)")
  endif()
endfunction()

function(dljob_add_gtest target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LABEL;TEST_FILTER" "PROPERTIES")
  _dljob_check_tier("dljob_add_gtest(${target})" "${arg_LABEL}")
  if("LABELS" IN_LIST arg_PROPERTIES)
    message(FATAL_ERROR "dljob_add_gtest(${target}): give the tier as LABEL, not in PROPERTIES")
  endif()
  set(filter)
  if(arg_TEST_FILTER)
    set(filter TEST_FILTER "${arg_TEST_FILTER}")
  endif()
  gtest_discover_tests(${target} ${arg_UNPARSED_ARGUMENTS} ${filter}
                       PROPERTIES LABELS ${arg_LABEL} ${arg_PROPERTIES})
  get_property(includes DIRECTORY PROPERTY TEST_INCLUDE_FILES)
  list(GET includes -1 registered)
  set_property(GLOBAL APPEND PROPERTY DLJOB_TIERED_TEST_INCLUDES "${registered}")
  if(arg_LABEL STREQUAL "unit")
    set_property(GLOBAL APPEND PROPERTY DLJOB_UNIT_TEST_TARGETS ${target})
  endif()
endfunction()

function(dljob_add_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;LABEL" "LABELS;COMMAND")
  _dljob_check_tier("dljob_add_test(${arg_NAME})" "${arg_LABEL}")
  foreach(label IN LISTS arg_LABELS)
    if(label IN_LIST DLJOB_TEST_TIERS)
      message(FATAL_ERROR "dljob_add_test(${arg_NAME}): a test has one tier; ${label} in LABELS")
    endif()
  endforeach()
  add_test(NAME ${arg_NAME} COMMAND ${arg_COMMAND} ${arg_UNPARSED_ARGUMENTS})
  set_tests_properties(${arg_NAME} PROPERTIES LABELS "${arg_LABEL};${arg_LABELS}")
  set_property(GLOBAL APPEND PROPERTY DLJOB_TIERED_TESTS ${arg_NAME})
  list(GET arg_COMMAND 0 program)
  if(arg_LABEL STREQUAL "unit" AND TARGET "${program}")
    set_property(GLOBAL APPEND PROPERTY DLJOB_UNIT_TEST_TARGETS ${program})
  endif()
endfunction()

# Run once all directories are configured: every test made through the functions above, and the
# `unit_tests` target that builds every binary of the unit tier.
function(_dljob_check_test_tiers)
  get_property(tiered GLOBAL PROPERTY DLJOB_TIERED_TESTS)
  get_property(tiered_includes GLOBAL PROPERTY DLJOB_TIERED_TEST_INCLUDES)
  set(untiered)
  set(dirs ${CMAKE_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(tests DIRECTORY ${dir} PROPERTY TESTS)
    foreach(test IN LISTS tests)
      if(NOT test IN_LIST tiered)
        list(APPEND untiered "add_test ${test} (${dir})")
      endif()
    endforeach()
    get_property(includes DIRECTORY ${dir} PROPERTY TEST_INCLUDE_FILES)
    foreach(include IN LISTS includes)
      if(NOT include IN_LIST tiered_includes)
        get_filename_component(name "${include}" NAME)
        string(REGEX REPLACE "\\[[0-9]+\\]_include\\.cmake$" "" target "${name}")
        list(APPEND untiered "gtest_discover_tests(${target}) (${dir})")
      endif()
    endforeach()
  endwhile()
  if(untiered)
    list(JOIN untiered "\n  " listed)
    message(FATAL_ERROR "tests registered without a tier (use dljob_add_test or dljob_add_gtest "
                        "with LABEL unit|mpi|e2e; see cmake/dljob_tests.cmake):\n  ${listed}")
  endif()
  get_property(unit_targets GLOBAL PROPERTY DLJOB_UNIT_TEST_TARGETS)
  if(unit_targets)
    list(REMOVE_DUPLICATES unit_targets)
    add_custom_target(unit_tests)
    add_dependencies(unit_tests ${unit_targets})
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _dljob_check_test_tiers)
