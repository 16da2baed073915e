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
#   dljob_add_gtest(TARGET LABEL <tier> [TEST_FILTER <gtest filter>] [SHARDS <n>]
#                   [<gtest_discover_tests args>])
#       gtest_discover_tests with the tier as every discovered test's label. A binary whose cases
#       belong to different tiers is registered once per tier with complementary filters, e.g.
#       TEST_FILTER "-S3StoreTest.*" (unit) and TEST_FILTER "S3StoreTest.*" (e2e).
#       SHARDS n registers n ctest tests instead of one per case, <prefix><target>.<tier>/<i>of<n>,
#       each running its share of the filtered cases in one process (gtest's GTEST_TOTAL_SHARDS
#       and GTEST_SHARD_INDEX). For binaries whose start-up dominates a case: a LibTorch binary
#       spends about 0.6 s loading its libraries, more than most of its cases take. One case of
#       them by hand: <binary> --gtest_filter=Suite.Case. TEST_PREFIX, WORKING_DIRECTORY and
#       PROPERTIES (ENVIRONMENT included) apply as they do to discovered tests.
#   dljob_add_test(NAME <name> LABEL <tier> [LABELS <opt-in>...] COMMAND ... [<add_test args>])
#       add_test with the tier (and opt-in labels) as its labels. Set other properties with
#       set_tests_properties, never LABELS (that would replace the tier).
#
# scripts/test.sh checks the built suite too: each test listed by ctest carries exactly one tier.
#
# Test binaries (every executable linking GoogleTest) are not unity builds, though the rest of
# the tree is (CMakeLists.txt): test files repeat fixture and helper names freely. A test binary
# whose compile time matters more opts in with DLJOB_UNITY_TEST ON beside UNITY_BUILD ON (the
# trainer's, each of whose files costs 20-30 s of LibTorch templates).
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
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "LABEL;TEST_FILTER;SHARDS" "PROPERTIES")
  _dljob_check_tier("dljob_add_gtest(${target})" "${arg_LABEL}")
  if("LABELS" IN_LIST arg_PROPERTIES)
    message(FATAL_ERROR "dljob_add_gtest(${target}): give the tier as LABEL, not in PROPERTIES")
  endif()
  if(arg_SHARDS)
    _dljob_add_gtest_shards(${target} "${arg_LABEL}" "${arg_TEST_FILTER}" "${arg_SHARDS}"
                            "${arg_PROPERTIES}" ${arg_UNPARSED_ARGUMENTS})
    return()
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

# dljob_add_gtest(... SHARDS n): n tests of one process each (see the top of this file).
function(_dljob_add_gtest_shards target tier filter shards properties)
  cmake_parse_arguments(PARSE_ARGV 5 arg "" "TEST_PREFIX;WORKING_DIRECTORY" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "dljob_add_gtest(${target} SHARDS): only TEST_PREFIX, WORKING_DIRECTORY "
                        "and PROPERTIES go with SHARDS, not ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT shards MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "dljob_add_gtest(${target}): SHARDS ${shards} is not a positive count")
  endif()
  set(directory)
  if(arg_WORKING_DIRECTORY)
    set(directory WORKING_DIRECTORY ${arg_WORKING_DIRECTORY})
  endif()
  set(filter_arg)
  if(filter)
    set(filter_arg "--gtest_filter=${filter}")
  endif()
  # PROPERTIES' ENVIRONMENT is kept apart so the shard's variables are added to it, not replaced.
  set(environment)
  set(others)
  set(in_environment FALSE)
  foreach(item IN LISTS properties)
    if(item STREQUAL "ENVIRONMENT")
      set(in_environment TRUE)
    elseif(in_environment AND item MATCHES "=")
      list(APPEND environment "${item}")
    else()
      set(in_environment FALSE)
      list(APPEND others "${item}")
    endif()
  endforeach()
  math(EXPR last "${shards} - 1")
  foreach(index RANGE ${last})
    math(EXPR number "${index} + 1")
    set(name "${arg_TEST_PREFIX}${target}.${tier}/${number}of${shards}")
    dljob_add_test(NAME ${name} LABEL ${tier} COMMAND ${target} ${filter_arg} ${directory})
    if(others)
      set_tests_properties(${name} PROPERTIES ${others})
    endif()
    set_tests_properties(${name} PROPERTIES ENVIRONMENT
      "${environment};GTEST_TOTAL_SHARDS=${shards};GTEST_SHARD_INDEX=${index}")
  endforeach()
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

# Sets `out` to every directory of the build: the source root and its subdirectories, recursively.
function(_dljob_all_directories out)
  set(all)
  set(dirs ${CMAKE_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    list(APPEND all ${dir})
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
  endwhile()
  set(${out} ${all} PARENT_SCOPE)
endfunction()

# UNITY_BUILD OFF for every executable that links GoogleTest and did not set DLJOB_UNITY_TEST.
function(_dljob_test_binaries_not_unity)
  _dljob_all_directories(dirs)
  foreach(dir IN LISTS dirs)
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      get_target_property(libraries ${target} LINK_LIBRARIES)
      get_target_property(opted_in ${target} DLJOB_UNITY_TEST)
      if(type STREQUAL "EXECUTABLE" AND libraries MATCHES "GTest::" AND NOT opted_in)
        set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
      endif()
    endforeach()
  endforeach()
endfunction()

# Run once all directories are configured: every test made through the functions above, and the
# `unit_tests` target that builds every binary of the unit tier.
function(_dljob_check_test_tiers)
  get_property(tiered GLOBAL PROPERTY DLJOB_TIERED_TESTS)
  get_property(tiered_includes GLOBAL PROPERTY DLJOB_TIERED_TEST_INCLUDES)
  set(untiered)
  _dljob_all_directories(dirs)
  foreach(dir IN LISTS dirs)
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
  endforeach()
  if(untiered)
    list(JOIN untiered "\n  " listed)
    message(FATAL_ERROR "tests registered without a tier (use dljob_add_test or dljob_add_gtest "
                        "with LABEL unit|mpi|e2e; see cmake/dljob_tests.cmake):\n  ${listed}")
  endif()
  _dljob_test_binaries_not_unity()
  get_property(unit_targets GLOBAL PROPERTY DLJOB_UNIT_TEST_TARGETS)
  if(unit_targets)
    list(REMOVE_DUPLICATES unit_targets)
    add_custom_target(unit_tests)
    add_dependencies(unit_tests ${unit_targets})
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _dljob_check_test_tiers)
