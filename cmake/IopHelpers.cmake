# Compiler flags shared by every target, and iop_test() which registers a
# cmocka unit test with ctest and a timeout.

add_compile_options(-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
                    -Wno-unused-parameter -fno-strict-aliasing)
if(IOP_WERROR)
  add_compile_options(-Werror)
endif()
add_compile_definitions(_GNU_SOURCE)

if(IOP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all)
endif()

# iop_test(NAME SOURCES a.c [b.c] LIBS x [y] [TIMEOUT s])
# Builds NAME from SOURCES, links cmocka and LIBS, and adds it to ctest
# with the label "unit": no MPI, no launcher, the same in every MPI build
# (scripts/test runs them in the Open MPI and sanitizer builds, not again
# in the MPICH one).
function(iop_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS unit
                       ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout")
endfunction()

# Fuzz builds (clang): instrument everything for coverage and ASan + UBSan;
# only the fuzz targets link libFuzzer's driver (tests/fuzz).
if(IOP_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "IOP_FUZZ needs clang: configure with CC=clang")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
