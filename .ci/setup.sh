# Sourced by .ci/first-run and .ci/run: what both need on a fresh machine. The project's own virtual environment
# (.venv, made if missing: Debian's system Python refuses pip installs outside one), activated, so that
# `python3`, `pip` and Spark's scripts are the environment's; and a Java runtime for Spark's reports.
as_root=""
[ "$(id -u)" -ne 0 ] && as_root="sudo"
apt_install() {
    $as_root apt-get install -y -q "$@" >/dev/null 2>&1 \
        || { $as_root apt-get update -q >/dev/null && $as_root apt-get install -y -q "$@" >/dev/null; }
}
if [ ! -x .venv/bin/python ]; then
    # Debian ships `venv` without ensurepip until python3-venv is installed
    python3 -m venv .venv >/dev/null 2>&1 || { rm -rf .venv && apt_install python3-venv && python3 -m venv .venv; }
fi
# shellcheck disable=SC1091
. .venv/bin/activate
command -v java >/dev/null || [ -n "${JAVA_HOME:-}" ] || apt_install openjdk-17-jre-headless
# A C compiler and Python's headers: the install compiles the model (setup.py); without them (none to be had) it
# runs as plain Python, slower, and nothing fails
command -v cc >/dev/null || apt_install gcc || echo "no C compiler: the model will run as plain Python" >&2
python3 -c 'import os, sysconfig; raise SystemExit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))' \
    || apt_install python3-dev || echo "no Python headers: the model will run as plain Python" >&2
