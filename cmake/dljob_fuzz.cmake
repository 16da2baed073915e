# Fuzz targets. Each libFuzzer target of dljob is registered with one call:
#
#   dljob_add_fuzzer(NAME <stem> SOURCE <file> LIBRARY <library> CORPUS <dir>)
#
# With clang it builds <stem>_fuzzer, a real libFuzzer binary (ASan + UBSan), whose ctest (labels
# e2e and fuzz) runs it for DLJOB_FUZZ_TIME seconds from the committed seeds in CORPUS; new inputs
# it finds go to a directory in the build tree, never into the source tree. In a fuzz-only build
# (DLJOB_FUZZ_ONLY, scripts/dev/fuzz.sh) the library is instrumented too, or the fuzzer would see
# only the target's own branches; in a full clang build the library stays plain, since the
# programs link it. With GCC (no libFuzzer) the same source links jobs/fuzz/standalone_main.cc,
# a driver that replays the seeds and a fixed-seed series of their mutations, as the unit test
# <stem>_fuzz_replay, so every build exercises every target.
set(DLJOB_FUZZ_TIME 20 CACHE STRING "Seconds each fuzzer's ctest runs (build-fuzz/, fuzz.sh)")

function(dljob_add_fuzzer)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SOURCE;LIBRARY;CORPUS" "")
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(target ${arg_NAME}_fuzzer)
    add_executable(${target} ${arg_SOURCE})
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined
                           -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined)
    if(DLJOB_FUZZ_ONLY)
      target_compile_options(${arg_LIBRARY} PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
    endif()
    target_link_libraries(${target} PRIVATE ${arg_LIBRARY})
    # A fuzzing session: e2e, never in the unit tier's minute.
    dljob_add_test(NAME ${target} LABEL e2e LABELS fuzz
             COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
                     $<TARGET_FILE:${target}> -max_total_time=${DLJOB_FUZZ_TIME}
                     -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
                     ${CMAKE_CURRENT_BINARY_DIR}/corpus ${arg_CORPUS})
    file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/corpus)
  else()
    set(target ${arg_NAME}_fuzz_replay)
    add_executable(${target} ${arg_SOURCE} ${PROJECT_SOURCE_DIR}/jobs/fuzz/standalone_main.cc)
    target_link_libraries(${target} PRIVATE ${arg_LIBRARY})
    dljob_add_test(NAME ${target} LABEL unit COMMAND ${target} ${arg_CORPUS} 20000)
  endif()
endfunction()
