# Sourced by the bench/h200 scripts of 2026-12-04 evening: the repository root
# as working folder, OUT for what comes back, libinih from .carry/lib (dpkg -x
# of Debian's libinih1) and CUDA's libraries, a runtime folder for fikitd's
# socket, and Python's output unbuffered (progress shows as it happens).
# Sourced with the script's arguments: -h or --help prints the script's
# header comment (from its second line to the first that is no comment) and
# exits; otherwise BUILD_DIR is the first argument (default build).
set -u
case ${1:-} in -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac
BUILD_DIR=${1:-build}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/out}
export LD_LIBRARY_PATH="$PWD/.carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_RUNTIME_DIR=/tmp/xdg PYTHONUNBUFFERED=1
mkdir -p /tmp/xdg "$OUT"
