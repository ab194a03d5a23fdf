#!/usr/bin/env bash
# The Debian tools the test suite uses beyond a C compiler and Python: the one
# list that README names and .ci/run installs. Without them whole families of
# tests skip (each says which tool it lacks); nothing fails.
#
#   .ci/apt-tools.sh            the packages not installed yet, one line
#   .ci/apt-tools.sh --all      every package of the list
#   .ci/apt-tools.sh --install  apt-get install the missing ones (as root)
set -euo pipefail

# "command package..." a line: the packages are needed when the command is not
# on PATH. What each adds:
tools=(
    # variants for CPUs this machine is not, run under emulation (test_cpu_qemu,
    # test_three_builders, test_downstream_extension, test_toolkit_wheel, ...)
    "qemu-x86_64 qemu-user"
    # the second compiler (test_compilers, the toolkit's tests)
    "clang clang"
    # builds through a cache and a local distccd (test_build_cache)
    "ccache ccache"
    "distcc distcc"
    # the toolkit's dispatchgen.pc (test_downstream_extension)
    "pkg-config pkg-config"
    # the C runtime cross-built and run under qemu-aarch64 (test_cross_aarch64)
    "aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
    # the cross matrix (test_cross_matrix, test_program_guard): ppc64le,
    # big-endian POWER, s390x, riscv64 (clang 19 builds its RVV target and
    # llvm 19's objdump reads it)
    "powerpc64le-linux-gnu-gcc gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross"
    "powerpc64-linux-gnu-gcc gcc-powerpc64-linux-gnu libc6-dev-ppc64-cross"
    "s390x-linux-gnu-gcc gcc-s390x-linux-gnu libc6-dev-s390x-cross"
    "riscv64-linux-gnu-gcc gcc-riscv64-linux-gnu libc6-dev-riscv64-cross"
    "clang-19 clang-19 llvm-19"
    # Windows programs built by mingw-w64 (gcc; clang-19 --target) and run
    # under wine (test_windows_mingw)
    "x86_64-w64-mingw32-gcc gcc-mingw-w64-x86-64"
    "wine wine wine64"
)

all="" missing=""
for line in "${tools[@]}"; do
    read -r cmd pkgs <<<"$line"
    all="$all $pkgs"
    command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkgs"
done

case "${1:-}" in
"") echo $missing ;;
--all) echo $all ;;
--install)
    if [ -z "$missing" ]; then exit 0; fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    ;;
*)
    echo "usage: .ci/apt-tools.sh [--all | --install]" >&2
    exit 2
    ;;
esac
