# bench/shapes_setup.sh: sourced by bench/shape_flags.sh and
# bench/neighbour_flags.sh with bin (BIN_DIR, absolute) and out set: puts
# a device pack's lib/ on LD_LIBRARY_PATH, sets mw, builds bench/shapes.c as
# $out/shapes, and saves the user's machine profile, put back on exit
# (the scripts' calibrations write it, as memwatch calibrate does).
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -d "$bin/../lib" ] && export LD_LIBRARY_PATH=$bin/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mw=$bin/memwatch
shapes=$out/shapes
cc -O2 -pthread -o "$shapes" "$src/bench/shapes.c" || exit 1
prof=${XDG_DATA_HOME:-$HOME/.local/share}/memwatch/profile.json
saved=""
if [ -f "$prof" ]; then saved=$out/profile-before.json; cp -p "$prof" "$saved"; fi
restore() { if [ -n "$saved" ]; then cp -p "$saved" "$prof"; else rm -f "$prof"; fi; }
trap restore EXIT
