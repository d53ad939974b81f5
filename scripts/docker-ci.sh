#!/usr/bin/env bash
# A real Docker engine for the container tests (tests/test_docker.py), on a
# Debian machine where we are root, no registry is reachable and nothing
# starts services. Two ways to use it:
#
#   bash scripts/docker-ci.sh [COMMAND...]
#       start the engine, build the images, run COMMAND (default: the Docker
#       tests), stop the engine; exits with COMMAND's status.
#
#   source scripts/docker-ci.sh; docker_ci_start; trap docker_ci_stop EXIT
#       the same set-up inside a caller's shell (.ci/run), which then runs the
#       whole test suite with the exported variables below.
#
# docker_ci_start:
#   1. uses an engine that already answers `docker info` (and leaves it running);
#      otherwise installs docker.io and debootstrap from Debian's packages if
#      missing, starts dockerd in the background and remembers its PID;
#   2. makes a base image without a registry: debootstrap --variant=minbase of
#      this machine's release from the mirror apt already uses, with python3,
#      python3-venv and this machine's CA certificates (pip inside the build
#      goes through a TLS-inspecting proxy here), then `docker import`;
#      reused when it already exists (GRADER_DOCKER_REBUILD_BASE=1 remakes it);
#   3. builds the product image through scripts/grade-in-docker.sh --build
#      (classic builder, --force-rm, BASE_IMAGE=the local base).
# It exports:
#   GRADER_DOCKER_IMAGE        the product image the tests use
#   GRADER_DOCKER_BASE_IMAGE   the base it was built from (also BASE_IMAGE)
#   GRADER_DOCKER_UNAVAILABLE  set only when the package mirror is unreachable (the
#                           engine cannot be installed, or debootstrap cannot
#                           download the base): the tests skip with this reason
# Any other failure (engine installed but not starting, a failed build) is an
# error: docker_ci_start returns non-zero after stopping what it started.
# docker_ci_stop stops dockerd by its PID (TERM, then KILL after 20 s).

DOCKER_CI_ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
DOCKER_CI_WORK=${GRADER_DOCKER_WORK:-/var/tmp/grader-docker-ci}
DOCKER_CI_BASE_TAG=${GRADER_DOCKER_BASE_TAG:-local/grader-ci-base:latest}
DOCKER_CI_IMAGE_TAG=${GRADER_DOCKER_IMAGE_TAG:-vit-encoder-block-grader:ci}
DOCKER_CI_DOCKERD_PID=

docker_ci_log() { printf '[docker-ci %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

docker_ci_loud() {
    printf '\n%s\n!!! docker-ci: %s\n%s\n\n' "$(printf '!%.0s' {1..78})" "$*" "$(printf '!%.0s' {1..78})" >&2
}

# The Debian mirror apt on this machine uses (deb822 .sources first, then sources.list).
docker_ci_mirror() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # First URI of a stanza whose Suites include the bare release name.
        uri=$(awk -v rel="$1" '
            /^[[:space:]]*$/ { if (u && s) { print u; exit } u = ""; s = 0; next }
            tolower($1) == "uris:" { u = $2 }
            tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == rel) s = 1 }
            END { if (u && s) print u }' "$f" | head -n 1)
        [ -n "$uri" ] && { printf '%s\n' "$uri"; return 0; }
    done
    if [ -f /etc/apt/sources.list ]; then
        uri=$(awk -v rel="$1" '$1 == "deb" { for (i = 2; i < NF; i++) if ($(i+1) == rel && $i !~ /^\[/) { print $i; exit } }' \
              /etc/apt/sources.list)
        [ -n "$uri" ] && { printf '%s\n' "$uri"; return 0; }
    fi
    return 1
}

docker_ci_install() {
    local missing=()
    command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
    command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
    [ ${#missing[@]} -eq 0 ] && return 0
    docker_ci_log "installing ${missing[*]} from Debian's packages"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } \
            >"$DOCKER_CI_WORK/apt.log" 2>&1; then
        tail -n 5 "$DOCKER_CI_WORK/apt.log" >&2
        return 1
    fi
}

docker_ci_engine() {
    if docker info >/dev/null 2>&1; then
        docker_ci_log "using the Docker engine that is already running (it is left running)"
        return 0
    fi
    docker_ci_log "starting dockerd (log: $DOCKER_CI_WORK/dockerd.log)"
    dockerd >"$DOCKER_CI_WORK/dockerd.log" 2>&1 &
    DOCKER_CI_DOCKERD_PID=$!
    local i
    for i in $(seq 1 150); do
        if docker info >/dev/null 2>&1; then
            docker_ci_log "engine $(docker info --format '{{.ServerVersion}}') answers (pid $DOCKER_CI_DOCKERD_PID)"
            return 0
        fi
        kill -0 "$DOCKER_CI_DOCKERD_PID" 2>/dev/null || break
        sleep 0.2
    done
    tail -n 20 "$DOCKER_CI_WORK/dockerd.log" >&2
    docker_ci_loud "dockerd did not answer \`docker info\` within 30 s (log above)"
    return 1
}

docker_ci_base_image() {
    if [ "${GRADER_DOCKER_REBUILD_BASE:-0}" != 1 ] && docker image inspect "$DOCKER_CI_BASE_TAG" >/dev/null 2>&1; then
        docker_ci_log "reusing base image $DOCKER_CI_BASE_TAG"
        return 0
    fi
    local release mirror rootfs="$DOCKER_CI_WORK/rootfs"
    release=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    [ -n "$release" ] || { docker_ci_loud "cannot tell this machine's release from /etc/os-release"; return 1; }
    mirror=$(docker_ci_mirror "$release") \
        || { docker_ci_loud "no apt source for '$release' in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"; return 1; }
    docker_ci_log "debootstrap --variant=minbase $release from $mirror (about a minute)"
    rm -rf "$rootfs"
    if ! debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
            "$release" "$rootfs" "$mirror" >"$DOCKER_CI_WORK/debootstrap.log" 2>&1; then
        tail -n 10 "$DOCKER_CI_WORK/debootstrap.log" >&2
        if grep -qE "Failed getting release file|Couldn't download|Failure while downloading" \
                "$DOCKER_CI_WORK/debootstrap.log"; then
            return 3   # the mirror is unreachable: the caller reports it as unavailable
        fi
        docker_ci_loud "debootstrap failed (log above)"
        return 1
    fi
    # This machine's extra CAs (a TLS-inspecting proxy signs PyPI's certificate
    # here); pip in a venv uses certifi unless PIP_CERT names the system bundle.
    local crt
    for crt in /usr/local/share/ca-certificates/*.crt; do
        [ -f "$crt" ] && cp "$crt" "$rootfs/usr/local/share/ca-certificates/"
    done
    chroot "$rootfs" update-ca-certificates >/dev/null 2>&1 \
        || { docker_ci_loud "update-ca-certificates failed in the base rootfs"; return 1; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    docker_ci_log "importing the rootfs as $DOCKER_CI_BASE_TAG"
    if ! tar -C "$rootfs" -c . | docker import \
            --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
            --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
            --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
            --change 'CMD ["/bin/bash"]' - "$DOCKER_CI_BASE_TAG" >/dev/null; then
        docker_ci_loud "docker import of the base rootfs failed"
        return 1
    fi
    rm -rf "$rootfs"
}

docker_ci_stop() {
    [ -n "$DOCKER_CI_DOCKERD_PID" ] || return 0
    local pid=$DOCKER_CI_DOCKERD_PID i
    DOCKER_CI_DOCKERD_PID=
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || { docker_ci_log "dockerd (pid $pid) stopped"; return 0; }
        sleep 0.2
    done
    docker_ci_log "dockerd (pid $pid) ignored SIGTERM for 20 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null
    return 0
}

docker_ci_start() {
    local t0=$SECONDS t
    unset GRADER_DOCKER_UNAVAILABLE
    mkdir -p "$DOCKER_CI_WORK"
    if ! docker_ci_install; then
        export GRADER_DOCKER_UNAVAILABLE="the Docker engine could not be installed: apt-get install docker.io failed (package mirror unreachable?); see $DOCKER_CI_WORK/apt.log"
        docker_ci_loud "$GRADER_DOCKER_UNAVAILABLE. THE CONTAINER TESTS WILL BE SKIPPED."
        return 0
    fi
    docker_ci_engine || { docker_ci_stop; return 1; }
    t=$SECONDS
    local status=0
    docker_ci_base_image || status=$?
    if [ "$status" = 3 ]; then
        export GRADER_DOCKER_UNAVAILABLE="no base image: debootstrap could not download from the package mirror (unreachable?); see $DOCKER_CI_WORK/debootstrap.log"
        docker_ci_loud "$GRADER_DOCKER_UNAVAILABLE. THE CONTAINER TESTS WILL BE SKIPPED."
        docker_ci_stop
        return 0
    elif [ "$status" != 0 ]; then
        docker_ci_stop
        return 1
    fi
    docker_ci_log "base image ready in $((SECONDS - t)) s"
    t=$SECONDS
    if ! GRADER_IMAGE=$DOCKER_CI_IMAGE_TAG BASE_IMAGE=$DOCKER_CI_BASE_TAG \
            "$DOCKER_CI_ROOT/scripts/grade-in-docker.sh" --build >/dev/null; then
        docker_ci_loud "building the product image $DOCKER_CI_IMAGE_TAG failed (output above)"
        docker_ci_stop
        return 1
    fi
    docker_ci_log "built $DOCKER_CI_IMAGE_TAG in $((SECONDS - t)) s: $(docker image inspect --format '{{.Size}}' "$DOCKER_CI_IMAGE_TAG" | awk '{printf "%.0f MB", $1 / 1e6}')"
    export GRADER_DOCKER_IMAGE=$DOCKER_CI_IMAGE_TAG
    export GRADER_DOCKER_BASE_IMAGE=$DOCKER_CI_BASE_TAG
    export BASE_IMAGE=$DOCKER_CI_BASE_TAG
    docker_ci_log "Docker set-up done in $((SECONDS - t0)) s"
}

# Executed rather than sourced: set up, run the command, tear down.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -uo pipefail
    trap docker_ci_stop EXIT
    trap 'exit 130' INT TERM
    docker_ci_start || exit 1
    cd "$DOCKER_CI_ROOT" || exit 1
    if [ $# -eq 0 ]; then
        set -- python3 -m pytest tests/test_docker.py -q -ra
    fi
    "$@"
    exit $?
fi
