# The version of dispatchgen's CMake package (find_package(dispatchgen 0.1)):
# the toolkit's own (dispatchkit/__init__.py; tests/toolkit/test_packaging.py
# checks they agree). A request is met by this version or a newer one of the
# same major version.
set(PACKAGE_VERSION "0.1.0")
string(REGEX MATCH "^[0-9]+" _dispatchgen_major "${PACKAGE_VERSION}")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION
   OR NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL _dispatchgen_major)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
unset(_dispatchgen_major)
