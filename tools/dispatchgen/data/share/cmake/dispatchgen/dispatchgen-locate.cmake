# Installed by the dispatchgen wheel into <prefix>/share/cmake/dispatchgen,
# where plain CMake's find_package(dispatchgen) looks by itself for a prefix
# whose bin/ is on PATH (an activated venv): the package's own files live in
# the dispatchkit package, whose site-packages folder this prefix does not
# name, so the prefix's dispatch-config says where they are.
get_filename_component(_dispatchgen_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
find_program(_dispatchgen_config dispatch-config
  PATHS "${_dispatchgen_prefix}/bin" "${_dispatchgen_prefix}/Scripts" NO_DEFAULT_PATH)
if(NOT _dispatchgen_config)
  message(FATAL_ERROR "dispatchgen: no dispatch-config in ${_dispatchgen_prefix}/bin, "
    "which installed ${CMAKE_CURRENT_LIST_DIR}: reinstall the dispatchgen wheel there")
endif()
execute_process(COMMAND "${_dispatchgen_config}" --cmakedir
  OUTPUT_VARIABLE _dispatchgen_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _dispatchgen_rc)
if(NOT _dispatchgen_rc EQUAL 0 OR NOT EXISTS "${_dispatchgen_dir}/dispatchgenConfig.cmake")
  message(FATAL_ERROR "dispatchgen: ${_dispatchgen_config} --cmakedir failed (${_dispatchgen_rc})")
endif()
unset(_dispatchgen_prefix)
unset(_dispatchgen_rc)
unset(_dispatchgen_config CACHE)
