# Sourced by scripts/test.sh and scripts/run.sh: finds the build dependencies, installs the
# missing ones with apt-get when running as root (or with sudo), otherwise says what to install.
# The CUDA toolkit itself is never installed here: it must already be present (nvcc).

db_missing_pkgs=()
db_need() {  # db_need <test command...> -- <debian package>
  local pkg="${!#}"
  if ! eval "${@:1:$#-1}" >/dev/null 2>&1; then db_missing_pkgs+=("$pkg"); fi
}
db_header() { echo "#include <$1>" | ${CXX:-c++} -std=c++20 -E -x c++ - >/dev/null 2>&1; }

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if ! command -v nvcc >/dev/null 2>&1; then
  echo "error: nvcc not found. Install the CUDA Toolkit (12.4 or newer) and put its bin/ on PATH." >&2
  exit 1
fi

db_need command -v cmake cmake
db_need command -v ninja ninja-build
db_need command -v c++ g++
db_need db_header nlohmann/json.hpp nlohmann-json3-dev
db_need db_header CLI/CLI.hpp libcli11-dev
db_need db_header benchmark/benchmark.h libbenchmark-dev
db_need db_header gtest/gtest.h libgtest-dev
db_need db_header gmock/gmock.h libgmock-dev
if [ "${DB_NEED_MATPLOTLIB:-1}" = 1 ]; then
  db_need "/usr/bin/python3 -c 'import matplotlib'" python3-matplotlib
fi

if [ ${#db_missing_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then db_sudo=""; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then db_sudo="sudo"; else db_sudo="none"; fi
  if [ "$db_sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "error: missing build dependencies. Install them, e.g.:" >&2
    echo "  sudo apt-get install -y ${db_missing_pkgs[*]}" >&2
    echo "(or let CMake fetch the C++ ones: configure with network access and FETCHCONTENT_TRY_FIND_PACKAGE_MODE=NEVER)" >&2
    exit 1
  fi
  echo "== installing: ${db_missing_pkgs[*]}"
  # A machine without a package network (a GPU box behind a firewall, say) fails here: say what is
  # missing and how else to get it, instead of apt-get's own last words.
  if ! { $db_sudo apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive $db_sudo apt-get install -y -qq --no-install-recommends "${db_missing_pkgs[@]}" >/dev/null; }; then
    echo "error: could not install ${db_missing_pkgs[*]} with apt-get (no package network?)." >&2
    echo "  Install them from a local mirror or another machine's .deb files, or let CMake fetch the C++ ones" >&2
    echo "  where the network is up (FETCHCONTENT_TRY_FIND_PACKAGE_MODE=NEVER)." >&2
    exit 1
  fi
fi

# cmake older than 3.25 (the project minimum): take a newer one from PyPI, user-local. The
# version is compared numerically from `cmake --version` ("cmake version 3.25.1" -> 3, 25): a
# script run through `cmake -P /dev/stdin` fails on some systems whatever the version.
db_cmake_version=$(cmake --version 2>/dev/null | sed -n '1s/^cmake version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p')
db_cmake_old() {  # db_cmake_old "<major> <minor>" -> true when below 3.25 or unreadable
  local major minor
  read -r major minor <<<"$1"
  [ -z "$major" ] || [ "$major" -lt 3 ] || { [ "$major" -eq 3 ] && [ "$minor" -lt 25 ]; }
}
if db_cmake_old "$db_cmake_version"; then
  echo "== cmake $(cmake --version | head -1) is older than 3.25; installing cmake from PyPI"
  python3 -m pip install --user -q 'cmake>=3.25'
  export PATH=$HOME/.local/bin:$PATH
fi
