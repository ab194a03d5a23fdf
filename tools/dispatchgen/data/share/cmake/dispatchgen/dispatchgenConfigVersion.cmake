# The version check of the package's file, found as dispatchgenConfig.cmake is.
include("${CMAKE_CURRENT_LIST_DIR}/dispatchgen-locate.cmake")
include("${_dispatchgen_dir}/dispatchgenConfigVersion.cmake")
unset(_dispatchgen_dir)
