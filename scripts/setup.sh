#!/bin/sh
# Installs what is missing (Debian 12, as root), bootstraps, configures and builds dse in place.
# Idempotent: a second run only rebuilds what changed.
set -eu
cd "$(dirname "$0")/.."

PKGS="build-essential pkg-config autoconf automake libtool autoconf-archive libgsl-dev libcjson-dev \
libsqlite3-dev check libsubunit-dev gnuplot-nox python3 libprotobuf-c-dev protobuf-c-compiler"
# the tests also need python3-onnx (they write their ONNX files with it), Open MPI (the distributed
# sweep's tests) and Chromium (the HTML report is loaded in it): DSE_SETUP_TESTS=1
[ -z "${DSE_SETUP_TESTS:-}" ] || PKGS="$PKGS python3-onnx python3-numpy openmpi-bin libopenmpi-dev chromium"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup: missing Debian packages:$missing (run as root, or install them)" >&2
        exit 2
    fi
    echo "setup: installing$missing"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
    autoreconf -fi >/dev/null
fi
flags=${DSE_CONFIGURE_FLAGS:-}
# The test build spreads sweeps over MPI ranks too (tests/mpi_test.sh); the default build has no MPI.
if [ -n "${DSE_SETUP_TESTS:-}" ] && pkg-config --exists ompi-c 2>/dev/null; then
    flags="$flags --with-mpi"
fi
if [ ! -f Makefile ] || [ configure -nt config.status ] ||
    { case $flags in *--with-mpi*) true ;; *) false ;; esac && ! grep -q 'define HAVE_MPI 1' config.h; }; then
    ./configure -q $flags
fi
make -j"$(nproc)" >/dev/null
echo "setup: built ./dse ($(./dse --version))"
