# cmake -P script behind the `consumer` test: installs minidl's build tree into a fresh prefix,
# configures and builds tests/consumer against that install, runs it and checks what it prints.
# Inputs (-D): MINIDL_BINARY_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, CXX_COMPILER, GENERATOR,
# CXX_FLAGS (the sanitizer flags, when the build under test has them).
set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ${what} failed (exit ${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("cmake --install" ${CMAKE_COMMAND} --install ${MINIDL_BINARY_DIR} --prefix ${prefix})
step("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${build} -G ${GENERATOR}
     -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step("building the consumer" ${CMAKE_COMMAND} --build ${build})
step("running the consumer" ${build}/consumer)

set(expected "loss 30\ngrad 5 5 7 7 9 9\n")
if(NOT step_output STREQUAL expected)
  message(FATAL_ERROR "consumer test: expected output\n${expected}got\n${step_output}")
endif()
message(STATUS "consumer built against ${prefix} and printed the expected result")
