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
