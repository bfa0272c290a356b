#!/bin/sh
# tests/hermetic.sh HOME_DIR [NAME=VALUE ...] -- COMMAND [ARGS ...]
# Runs one test of memwatch's suite apart from the user's environment:
#  - HOME_DIR (emptied first) becomes HOME, with XDG_DATA_HOME,
#    XDG_CONFIG_HOME and XDG_CACHE_HOME inside it: no machine profile, cache
#    or configuration of the user's is read, and what the test writes there
#    stays beside the build;
#  - every inherited MEMWATCH_* variable is removed, and so are those that
#    would inject code or fetch symbols into the programs under test
#    (LD_PRELOAD, LD_AUDIT, CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH,
#    DEBUGINFOD_URLS) or that would change libpfm4's PMU (LIBPFM_FORCE_PMU);
#  - then the NAME=VALUE pairs of the test's registration are set.
# tests/CMakeLists.txt registers every test through it; test_suite_hermetic
# checks that.
set -eu
home=$1
shift
case $home in
*/test-home/?*) ;;
*) echo "hermetic.sh: '$home' is not a test-home/NAME directory" >&2; exit 2 ;;
esac
for v in $(env | sed -n 's/^\(MEMWATCH_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
unset LD_PRELOAD LD_AUDIT CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH DEBUGINFOD_URLS \
    LIBPFM_FORCE_PMU
rm -rf "$home"
mkdir -p "$home/.local/share" "$home/.config" "$home/.cache"
export HOME="$home" XDG_DATA_HOME="$home/.local/share" XDG_CONFIG_HOME="$home/.config" \
    XDG_CACHE_HOME="$home/.cache"
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
    [A-Za-z_]*=*) export "$1" ;;
    *) echo "hermetic.sh: '$1' is not NAME=VALUE" >&2; exit 2 ;;
    esac
    shift
done
[ $# -gt 0 ] || { echo "hermetic.sh: no -- before the command" >&2; exit 2; }
shift
exec "$@"
