# tests/mw_tests.cmake: how memwatch's tests are registered, for the whole
# project (tests/CMakeLists.txt) and for gpu/ built on its own. Needs
# MW_ROOT; sets MW_TEST_DIR and MW_FIXTURES.
set(MW_TEST_DIR ${MW_ROOT}/tests)
set(MW_FIXTURES ${MW_ROOT}/tests/fixtures)

# Every test runs hermetically (tests/hermetic.sh): with a HOME and
# XDG_DATA_HOME of its own under ${CMAKE_BINARY_DIR}/test-home/<name> (so no
# machine profile of the user's is read), with no inherited MEMWATCH_*,
# CUDA_INJECTION64_PATH, LD_PRELOAD or DEBUGINFOD_URLS, and with only the
# variables its registration names. Every test is registered through
# mw_register_test, which puts the wrapper first and labels the test with its
# folder (preload, cli, report, ...); test_suite_hermetic checks that no test
# escapes it.
set(MW_HERMETIC ${MW_ROOT}/tests/hermetic.sh)
set(MW_TEST_HOME ${CMAKE_BINARY_DIR}/test-home)

# mw_register_test(name LABELS ... [TIMEOUT s] [ENV K=V ...] COMMAND cmd args...)
function(mw_register_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "LABELS;ENV;COMMAND" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  get_filename_component(_dir ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  add_test(NAME ${name} COMMAND sh ${MW_HERMETIC} ${MW_TEST_HOME}/${name} ${T_ENV} -- ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS};${_dir}" TIMEOUT ${T_TIMEOUT}
                       SKIP_RETURN_CODE 77)
endfunction()

# mw_add_test(name SOURCES a.c b.c LIBS x y LABELS unit [TIMEOUT s] [ENV K=V ...])
function(mw_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS;ENV;ARGS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${MW_TEST_DIR} ${MW_ROOT}/include)
  target_compile_definitions(${name} PRIVATE MW_FIXTURES="${MW_FIXTURES}"
                             MW_BUILD_DIR="${CMAKE_BINARY_DIR}" MW_SOURCE_DIR="${MW_ROOT}")
  target_link_libraries(${name} PRIVATE ${T_LIBS} Threads::Threads)
  set(_t ${T_TIMEOUT})
  if(NOT _t)
    set(_t 120)
  endif()
  mw_register_test(${name} LABELS ${T_LABELS} TIMEOUT ${_t} ENV ${T_ENV}
                   COMMAND $<TARGET_FILE:${name}> ${T_ARGS})
endfunction()

# mw_fixed_flags(target flag...): a test program whose code the tests name
# (call sites, functions, lines, inlined frames, unwinding) is built the same
# in every build type (Debug, Release, RelWithDebInfo, MinSizeRel): its own
# flags come after the build type's (CMAKE_C_FLAGS_<TYPE>), so they decide
# the optimization level and the debug information, and -UNDEBUG undoes the
# build type's -DNDEBUG.
function(mw_fixed_flags target)
  target_compile_options(${target} PRIVATE ${ARGN} -UNDEBUG)
endfunction()

# mw_add_script_test(name SCRIPT path LABELS ... ) : shell tests, run with bash
# A build with -DMW_SANITIZE=address: programs run under libmemwatch.so need
# the ASan runtime first in the library list (it replaces malloc before
# anything else may). Scripts put $MW_SAN_PRELOAD in front of libmemwatch.so;
# leak checking is off (the test programs exit with live allocations) and
# fatal signals keep their own dispositions (the tests check them).
set(_mw_san_env "")
if(MW_SANITIZE MATCHES "address")
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE _mw_asan_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(EXISTS "${_mw_asan_rt}")
    set(_mw_san_env "MW_SAN_PRELOAD=${_mw_asan_rt};ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_abort=0")
  endif()
endif()

function(mw_add_script_test name)
  cmake_parse_arguments(T "" "SCRIPT;TIMEOUT" "LABELS;ENV;DEPENDS" ${ARGN})
  set(_t ${T_TIMEOUT})
  if(NOT _t)
    set(_t 300)
  endif()
  mw_register_test(${name} LABELS ${T_LABELS} TIMEOUT ${_t}
                   ENV MW_BUILD_DIR=${CMAKE_BINARY_DIR} MW_SOURCE_DIR=${MW_ROOT}
                       MW_FIXTURES=${MW_FIXTURES} ${_mw_san_env} ${T_ENV}
                   COMMAND bash ${T_SCRIPT})
endfunction()

