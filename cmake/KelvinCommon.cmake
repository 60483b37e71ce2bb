# Flags and helpers shared by every target.
include(GNUInstallDirs) # CMAKE_INSTALL_LIBDIR, ... for the install rules (api/, cli/)
set(KELVIN_C_WARNINGS -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion)
if(KELVIN_WERROR)
  list(APPEND KELVIN_C_WARNINGS -Werror)
endif()
# -ffp-contract=off: no silent fma, so host and device round alike (kernels use FP_CONTRACT OFF)
add_compile_options(${KELVIN_C_WARNINGS} -ffp-contract=off)
# Every layer's objects also go into libkelvin.so (api/CMakeLists.txt): position-independent, and hidden
# unless a public header marks them KELVIN_API, so the library exports only kelvin_* symbols.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_C_VISIBILITY_PRESET hidden)
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)
if(KELVIN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # Every test of a sanitizer build (kl_add_test), wherever ctest is run from (scripts/test.sh sets the same):
  # * LeakSanitizer skips what the OpenCL runtime keeps until exit (tests/lsan.supp: pocl, its LLVM, the loader);
  # * intercept_tls_get_addr=0: the __tls_get_addr interceptor of GCC <= 13's (and LLVM <= 16's) sanitizer runtime
  #   takes a dynamic TLS block whose address is 16 bytes past a 4096 boundary for glibc 2.19's layout and reads
  #   the two words before it as the block's range; since glibc 2.25 they are malloc's, so the range is garbage and
  #   LeakSanitizer's tracer dies on it at exit ("Tracer caught signal 11", google/sanitizers#1322). It happened
  #   whenever pocl loaded kernels from a cache the uninstrumented build had filled. With the interceptor off, the
  #   blocks are still scanned: glibc 2.25+ allocates them with malloc, reachable from the thread's DTV.
  set(KL_SANITIZE_TEST_ENV
    "ASAN_OPTIONS=string_append::intercept_tls_get_addr=0"
    "LSAN_OPTIONS=set:suppressions=${PROJECT_SOURCE_DIR}/tests/lsan.supp:print_suppressions=0")
endif()

if(KELVIN_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "KELVIN_FUZZ needs clang (-DCMAKE_C_COMPILER=clang)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_compile_definitions(_GNU_SOURCE) # clang's C17 headers hide POSIX clocks otherwise
endif()

# kl_add_test(NAME SOURCES... LIBS ...): a cmocka test; exit 77 means "skipped" (no GPU, no device...)
function(kl_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT T_SOURCES)
    set(T_SOURCES ${name}.c)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}) # tests/cli_util.h and friends
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE
    KELVIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KELVIN_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT ${T_TIMEOUT})
  if(KELVIN_SANITIZE)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT_MODIFICATION "${KL_SANITIZE_TEST_ENV}")
  endif()
endfunction()
