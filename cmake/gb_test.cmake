# gb_unit_test(NAME SOURCES... [LIBS libs...]): one executable a test file,
# each built on tests/unit/test.h and run by ctest under the label "unit".
function(gb_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(${name} PRIVATE ${T_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  else()
    set_tests_properties(${name} PROPERTIES LABELS unit)
  endif()
endfunction()

# gb_py_test(NAME SCRIPT [LABEL label] [TIMEOUT seconds] [ARGS args...]
#            [ENV VAR=VALUE...] [SKIP_RETURN_CODE code] [WORKING_DIRECTORY dir]
#            [PROCESSORS n] [RUN_SERIAL]):
# a Python test (SCRIPT relative to the calling folder) that drives the real
# binaries: ctest hands it gpubenchd, the worker's test double and the client
# through GPUBENCH_DAEMON, GPUBENCH_FAKE_WORKER and GPUBENCH_CLIENT, plus ENV.
# LABEL defaults to api and TIMEOUT to 300 seconds.  Each test makes its own
# temporary folder and its daemons listen on port 0 (tests/api/harness.py),
# so tests run side by side (ctest -j); PROCESSORS and RUN_SERIAL are for the
# few that must not share the machine, and say why where they are used.
function(gb_py_test name script)
  cmake_parse_arguments(T "RUN_SERIAL"
    "LABEL;TIMEOUT;SKIP_RETURN_CODE;WORKING_DIRECTORY;PROCESSORS" "ARGS;ENV" ${ARGN})
  if(NOT T_LABEL)
    set(T_LABEL api)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_test(NAME ${name} COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/${script} ${T_ARGS})
  set(env "GPUBENCH_DAEMON=$<TARGET_FILE:gpubenchd>"
          "GPUBENCH_FAKE_WORKER=$<TARGET_FILE:gpubench-fake-worker>"
          "GPUBENCH_CLIENT=$<TARGET_FILE:gpubench>"
          PYTHONDONTWRITEBYTECODE=1 ${T_ENV})
  set_tests_properties(${name} PROPERTIES LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "${env}")
  foreach(prop SKIP_RETURN_CODE WORKING_DIRECTORY PROCESSORS)
    if(DEFINED T_${prop})
      set_tests_properties(${name} PROPERTIES ${prop} "${T_${prop}}")
    endif()
  endforeach()
  if(T_RUN_SERIAL)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
endfunction()
