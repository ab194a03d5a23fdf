# dispatchgen's CMake package: `find_package(dispatchgen)` gives
# dispatchgen_add_sources(), the CMake form of the one `dispatchgen meson`
# call of a client's meson.build (meson_plan.py): at configure time it runs
# the planner of the toolkit beside this file (standard library Python), which
# checks the CPU options against the compiler, writes the generated headers
# and lists the static libraries to build; each becomes an object library of
# the target: the CPU runtime and its guard (a module's init, or a program's
# check before main; without the baseline flags), the target's own sources
# (with them), each dispatchable source once per target, each variant of a
# variants file.
#
# Found by scikit-build-core through the wheel's `cmake.prefix` entry point,
# by plain CMake with -Ddispatchgen_DIR="$(dispatch-config --cmakedir)", and
# in a vendored copy with PATHS tools/dispatchgen/dispatchkit/cmake.
#
#   dispatchgen_add_sources(<target> MODULE <pkg._ext> | NAME <name>
#     [SOURCES files...] [DISPATCH files...] [VARIANTS files...]
#     [OPTIONS name=value...] [LIBRARIES targets...] [INCLUDE_DIRECTORIES dirs...]
#     [ENV_PREFIX prefix] [GROUPS file] [CPU_BASELINE value] [CPU_DISPATCH value])
#
# LIBRARIES and INCLUDE_DIRECTORIES: what every file compiles with (Python::Module,
# your headers' folders). The CPU options are cache variables, defaulting to
# the environment variables of the same names (the setuptools route reads
# them too), else min and `max -xop -fma4`.
if(CMAKE_VERSION VERSION_LESS 3.17)
  message(FATAL_ERROR "dispatchgen's CMake package needs CMake >= 3.17 (this is ${CMAKE_VERSION})")
endif()

foreach(_dg_option IN ITEMS "CPU_BASELINE;min" "CPU_DISPATCH;max -xop -fma4")
  list(GET _dg_option 0 _dg_name)
  list(GET _dg_option 1 _dg_value)
  if(NOT "$ENV{DISPATCHGEN_${_dg_name}}" STREQUAL "")
    set(_dg_value "$ENV{DISPATCHGEN_${_dg_name}}")
  endif()
  set(DISPATCHGEN_${_dg_name} "${_dg_value}" CACHE STRING "dispatchgen: ${_dg_name} (default: $DISPATCHGEN_${_dg_name})")
endforeach()
set(_dg_value OFF)
if(NOT "$ENV{DISPATCHGEN_DISABLE_OPTIMIZATION}" MATCHES "^(|0|[Ff][Aa][Ll][Ss][Ee]|[Nn][Oo]|[Oo][Ff][Ff])$")
  set(_dg_value ON)
endif()
option(DISPATCHGEN_DISABLE_OPTIMIZATION "dispatchgen: compile each dispatchable source once, as a baseline source" ${_dg_value})
unset(_dg_option)
unset(_dg_name)
unset(_dg_value)

function(dispatchgen_add_sources target)
  cmake_parse_arguments(PARSE_ARGV 1 DG "" "MODULE;NAME;ENV_PREFIX;GROUPS;CPU_BASELINE;CPU_DISPATCH"
    "SOURCES;DISPATCH;VARIANTS;OPTIONS;LIBRARIES;INCLUDE_DIRECTORIES")
  set(where "dispatchgen_add_sources(${target})")
  if(DG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${DG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET "${target}")
    message(FATAL_ERROR "${where}: no target ${target}: make it first (add_executable, Python_add_library)")
  endif()
  # one call per target: a second would add each object library again (a
  # dozen CMake errors); an ALIAS is its target, an IMPORTED one is not built here
  get_target_property(aliased "${target}" ALIASED_TARGET)
  if(aliased)
    set(target "${aliased}")
  endif()
  get_target_property(imported "${target}" IMPORTED)
  if(imported)
    message(FATAL_ERROR " ${where}: ${target} is an IMPORTED target: give a target this project builds")
  endif()
  get_target_property(added "${target}" DISPATCHGEN_ADDED_BY)
  if(added)
    message(FATAL_ERROR " ${where}: ${target} has its dispatchgen sources already (${added}): call dispatchgen_add_sources once per target, naming all its files")
  endif()
  if(DG_MODULE AND NOT DG_NAME)
    set(who --module "${DG_MODULE}")
  elseif(DG_NAME AND NOT DG_MODULE)
    set(who --name "${DG_NAME}")
  else()
    message(FATAL_ERROR "${where}: give MODULE <pkg._ext> (a Python extension) or NAME <name> (a program or library), one of them")
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST languages)
    message(FATAL_ERROR "${where}: the CPU runtime is C: enable it, project(... LANGUAGES C ...)")
  endif()
  foreach(option IN ITEMS CPU_BASELINE CPU_DISPATCH)
    if(NOT DEFINED DG_${option})
      set(DG_${option} "${DISPATCHGEN_${option}}")
    endif()
  endforeach()
  # the Python that runs the planner: any >= 3.9 (it is standard library only)
  if(DISPATCHGEN_PYTHON)
    set(python "${DISPATCHGEN_PYTHON}")
  elseif(Python_EXECUTABLE)
    set(python "${Python_EXECUTABLE}")
  elseif(Python3_EXECUTABLE)
    set(python "${Python3_EXECUTABLE}")
  else()
    find_package(Python3 3.9 COMPONENTS Interpreter REQUIRED)
    set(python "${Python3_EXECUTABLE}")
  endif()
  # an older one (DISPATCHGEN_PYTHON naming python2) would fail with a traceback
  execute_process(COMMAND "${python}" -c "import sys; print('%d.%d' % sys.version_info[:2])"
    RESULT_VARIABLE status OUTPUT_VARIABLE version ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT status EQUAL 0 OR NOT version MATCHES "^[0-9]+\\.[0-9]+$" OR version VERSION_LESS 3.9)
    message(FATAL_ERROR " ${where}: dispatchgen needs Python >= 3.9, and ${python} reports '${version}' (set DISPATCHGEN_PYTHON to a newer one)")
  endif()

  set(inputs)
  foreach(kind IN ITEMS SOURCES DISPATCH VARIANTS)
    set(files)
    foreach(file IN LISTS DG_${kind})
      get_filename_component(file "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND files "${file}")
    endforeach()
    string(TOLOWER "${kind}" flag)
    list(APPEND inputs "--${flag}" ${files})
    if(NOT kind STREQUAL "SOURCES")  # a changed @targets line or variants file configures again
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${files})
    endif()
  endforeach()
  foreach(option IN LISTS DG_OPTIONS)
    list(APPEND inputs "--option=${option}")
  endforeach()
  if(DG_ENV_PREFIX)
    list(APPEND inputs --env-prefix "${DG_ENV_PREFIX}")
  endif()
  if(DG_GROUPS)
    get_filename_component(groups "${DG_GROUPS}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND inputs --groups "${groups}")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${groups}")
  endif()
  if(DISPATCHGEN_DISABLE_OPTIMIZATION)
    list(APPEND inputs --disable-optimization)
  endif()
  get_target_property(type "${target}" TYPE)
  if(DG_NAME AND (type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "MODULE_LIBRARY"))
    list(APPEND inputs --shared-library)  # no .preinit_array there: Note [Program guard]
  endif()
  # --cc is split as a shell would: the compiler's path quoted whole, since
  # Windows installs compilers under "Program Files" (CMake writes / there)
  string(STRIP "${CMAKE_C_COMPILER_LAUNCHER} '${CMAKE_C_COMPILER}'" cc)
  get_filename_component(package "${CMAKE_CURRENT_FUNCTION_LIST_DIR}" DIRECTORY)
  set(outdir "${CMAKE_CURRENT_BINARY_DIR}/dispatchgen/${target}")
  execute_process(
    COMMAND "${python}" "${package}/__main__.py" meson ${who} --outdir "${outdir}"
      "--cc=${cc}" "--cflags=${CMAKE_C_FLAGS}" --cpu-baseline "${DG_CPU_BASELINE}"
      --cpu-dispatch "${DG_CPU_DISPATCH}" ${inputs}
    RESULT_VARIABLE status OUTPUT_VARIABLE plan ERROR_VARIABLE report)
  string(STRIP "${report}" report)
  set_property(TARGET "${target}" PROPERTY DISPATCHGEN_ADDED_BY "${where}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR " ${report}")  # the cause, in one line (indented: CMake wraps no such line)
  endif()
  string(REPLACE "\n" ";" report "${report}")
  foreach(line IN LISTS report)  # what is built, what is skipped and why
    message(STATUS "${line}")
  endforeach()

  set(pic "${CMAKE_POSITION_INDEPENDENT_CODE}")
  if(type STREQUAL "MODULE_LIBRARY" OR type STREQUAL "SHARED_LIBRARY")
    set(pic ON)
  endif()
  string(STRIP "${plan}" plan)
  string(REPLACE "\n" ";" plan "${plan}")
  foreach(line IN LISTS plan)
    string(REPLACE "\t" ";" fields "${line}")  # name, sources, link args, compile args
    list(GET fields 0 name)
    foreach(index IN ITEMS 1 2 3)  # words split at spaces, as meson's split(): no shell
      list(GET fields ${index} field)  # quoting, so -DDISPATCH_CPU_TARGET_NAME="AVX2" keeps its quotes
      string(REPLACE " " ";" field${index} "${field}")
    endforeach()
    set(library "${target}.${name}")
    if(field1 MATCHES "\\.[Ss](;|$)" AND NOT "ASM" IN_LIST languages)
      message(FATAL_ERROR " ${where}: ${name} compiles assembly (${field1}): enable it, project(... LANGUAGES C ASM)")
    endif()
    add_library("${library}" OBJECT ${field1})
    target_compile_options("${library}" PRIVATE ${field3})
    target_include_directories("${library}" PRIVATE ${DG_INCLUDE_DIRECTORIES})
    target_link_libraries("${library}" PRIVATE ${DG_LIBRARIES})
    set_target_properties("${library}" PROPERTIES C_VISIBILITY_PRESET hidden
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON POSITION_INDEPENDENT_CODE "${pic}")
    target_sources("${target}" PRIVATE $<TARGET_OBJECTS:${library}>)
    target_link_options("${target}" PRIVATE ${field2})
  endforeach()
endfunction()
