# Plain CMake's find_package(dispatchgen) in an activated venv: forwards to
# the package's file (dispatchgen-locate.cmake says why and how).
include("${CMAKE_CURRENT_LIST_DIR}/dispatchgen-locate.cmake")
include("${_dispatchgen_dir}/dispatchgenConfig.cmake")
unset(_dispatchgen_dir)
