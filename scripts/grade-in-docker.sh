#!/usr/bin/env bash
# Grade one submission in the grading container.
#
#   scripts/grade-in-docker.sh SUBMISSION [grader args, e.g. --tests sample]
#   scripts/grade-in-docker.sh --build      (build or refresh the image, print its name)
#
# Prints the verdict JSON on stdout and exits like the grader: 0 AC, 1 any
# other verdict, 2 cannot judge (including every problem of this script, with
# a one-line reason on stderr). docs/docker.md explains each docker flag.
#
# Environment:
#   GRADER_BUNDLE         the bundle's folder, relative to the repository root (default: the
#                         root's own bundle); the image carries it (the Dockerfile's BUNDLE)
#   GRADER_IMAGE          image name (default <the bundle's id>-grader:local)
#   BASE_IMAGE            base image to build FROM (default: the Dockerfile's python:3.12-slim)
#   GRADE_TIMEOUT         seconds before the container is killed and removed (default 420)
#   GRADE_CONTAINER_NAME  container name (default grade-in-docker-<pid>-<random>)
set -uo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
BUNDLE=${GRADER_BUNDLE:-.}
# The bundle's id (problem.yaml's top-level `id:`) names its image (check_bundle: is it there).
BUNDLE_ID=$(sed -n "s/^id:[[:space:]]*[\"']\{0,1\}\([A-Za-z0-9._-]*\).*/\1/p" "$ROOT/$BUNDLE/problem.yaml" 2>/dev/null | head -n 1)
IMAGE=${GRADER_IMAGE:-${BUNDLE_ID:-bundle}-grader:local}
TIMEOUT=${GRADE_TIMEOUT:-420}
NAME=${GRADE_CONTAINER_NAME:-grade-in-docker-$$-$RANDOM}
HASH_LABEL=org.grader.bundle-hash
# The grader's total budget is 300 s (problem.yaml limits.total_time_s); the
# default timeout adds start-up and the speed probe on a slow, busy machine.

# The documented flags (docs/docker.md justifies each one).
RUN_FLAGS=(--rm --network none --read-only --tmpfs /tmp:rw,noexec,nosuid,size=64m
           --memory 1g --memory-swap 1g --pids-limit 128
           --cap-drop ALL --security-opt no-new-privileges)

die() { printf 'grade-in-docker: %s\n' "$*" >&2; exit 2; }

usage() {
    sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

need_engine() {
    command -v docker >/dev/null 2>&1 \
        || die "the docker command is not installed (install Docker: https://docs.docker.com/engine/install/)"
    local err
    if ! err=$(docker info --format '{{.ServerVersion}}' 2>&1 >/dev/null); then
        err=$(printf '%s' "$err" | grep -v '^$' | head -n 1)
        case $err in
            *"permission denied"*)
                die "no Docker engine: \`docker info\` failed: $err (add yourself to the docker group, or run with sudo)" ;;
            *)
                die "no Docker engine: \`docker info\` failed: ${err:-no answer} (start Docker, e.g. \`sudo systemctl start docker\`, or point DOCKER_HOST at a running engine)" ;;
        esac
    fi
}

# The bundle the image carries: a folder inside the repository, holding problem.yaml.
check_bundle() {
    case $BUNDLE in
        /*|*..*) die "GRADER_BUNDLE must be a folder inside $ROOT, given relative to it: $BUNDLE" ;;
    esac
    [ -f "$ROOT/$BUNDLE/problem.yaml" ] || die "no problem.yaml in $ROOT/$BUNDLE (GRADER_BUNDLE)"
}

# A digest of everything the image is built from, so a stale image is rebuilt.
bundle_hash() {
    (
        cd "$ROOT" || exit 1
        printf 'base=%s\nbundle=%s\n' "${BASE_IMAGE:-default}" "$BUNDLE"
        local parts=() p
        for p in Dockerfile .dockerignore requirements.txt grader "$BUNDLE/problem.yaml" "$BUNDLE/problem.py" \
                 "$BUNDLE/calibration.yaml" "$BUNDLE/reference" "$BUNDLE/testcases"; do
            [ -e "$p" ] && parts+=("$p")   # problem.py and calibration.yaml are optional
        done
        find "${parts[@]}" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 \
            | LC_ALL=C sort -z | xargs -0 sha256sum
    ) | sha256sum | cut -c1-64
}

build_image() {
    local hash=$1 log
    log=$(mktemp "${TMPDIR:-/tmp}/grade-in-docker-build.XXXXXX") || die "cannot create a temporary file"
    local args=(--force-rm --label "$HASH_LABEL=$hash" -t "$IMAGE" --build-arg "BUNDLE=$BUNDLE")
    [ -n "${BASE_IMAGE:-}" ] && args+=(--build-arg "BASE_IMAGE=$BASE_IMAGE")
    printf 'grade-in-docker: building %s (the first build takes a minute)...\n' "$IMAGE" >&2
    # The classic builder: BuildKit needs a plugin and a registry that some hosts lack.
    if ! DOCKER_BUILDKIT=0 docker build "${args[@]}" "$ROOT" >"$log" 2>&1; then
        tail -n 15 "$log" >&2
        rm -f "$log"
        if [ -z "${BASE_IMAGE:-}" ]; then
            die "building $IMAGE failed (above). Without a registry, set BASE_IMAGE to a local image with python3 >= 3.11 (scripts/docker-ci.sh makes one)"
        fi
        die "building $IMAGE from BASE_IMAGE=$BASE_IMAGE failed (see above)"
    fi
    rm -f "$log"
}

ensure_image() {
    local hash current
    hash=$(bundle_hash) || die "cannot read the bundle at $ROOT"
    current=$(docker image inspect --format "{{ index .Config.Labels \"$HASH_LABEL\" }}" "$IMAGE" 2>/dev/null)
    if [ "$current" != "$hash" ] || [ "${1:-}" = force ]; then
        build_image "$hash"
    fi
}

# ---------------------------------------------------------------------------

case ${1:-} in
    "") usage >&2; die "missing SUBMISSION (a solution.py or .ipynb file)" ;;
    -h|--help) usage; exit 0 ;;
    --build) check_bundle; need_engine; ensure_image force; printf '%s\n' "$IMAGE"; exit 0 ;;
esac

submission=$1
shift
case $TIMEOUT in
    ''|*[!0-9]*|0) die "GRADE_TIMEOUT must be a positive whole number of seconds, got '$TIMEOUT'" ;;
esac

# A relative path (with or without ./) is relative to where you are; docker
# needs it absolute (`-v file:...` without ./ would silently create a volume).
case $submission in
    /*) path=$submission ;;
    *) path=$PWD/$submission ;;
esac
# These tests only choose the message: copy_submission below is what refuses a
# symlink for certain, since the path can change after any test.
if [ -L "$path" ]; then
    die "$submission is a symbolic link: pass the file itself (the wrapper never follows links: one could point at the bundle's reference or at a secret)"
elif [ -d "$path" ]; then
    die "$submission is a directory: pass the file itself, e.g. $submission/solution.py"
elif [ ! -e "$path" ]; then
    die "no such file: $submission (looked for $path)"
elif [ ! -f "$path" ]; then
    die "$submission is not a regular file (a FIFO, socket or device): pass a .py or .ipynb file"
elif [ ! -r "$path" ]; then
    die "cannot read $submission as user $(id -un): check its permissions (ls -l '$path')"
fi
case $path in
    *.[iI][pP][yY][nN][bB]) dest=/submission/solution.ipynb ;;
    *) dest=/submission/solution.py ;;
esac

# At most this much is copied: the grader's bound on a raw notebook (grader/judging/
# source.py MAX_NOTEBOOK_BYTES) plus one byte, so that it can say a file is too large.
COPY_LIMIT=$(( (4 << 20) + 1 ))

# Copy $1 to $2 with one open that refuses a symlink (O_NOFOLLOW) and cannot block on
# a FIFO (O_NONBLOCK), reading at most COPY_LIMIT bytes. GNU dd does it; python3 where
# dd cannot (BSD dd has no iflag=nofollow).
copy_submission() {
    if dd if=/dev/null of=/dev/null iflag=nofollow,nonblock,noctty status=none 2>/dev/null; then
        dd if="$1" of="$2" iflag=nofollow,nonblock,noctty,count_bytes bs=65536 count="$COPY_LIMIT" status=none
    elif command -v python3 >/dev/null 2>&1; then
        python3 - "$1" "$2" "$COPY_LIMIT" <<'PY'
import os, stat, sys
src, dst, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
if not stat.S_ISREG(os.fstat(fd).st_mode):
    sys.exit(f"{src} is not a regular file")
with open(fd, "rb") as f, open(dst, "wb") as out:
    out.write(f.read(limit))
PY
    else
        echo "copying without following links needs GNU dd or python3, and neither is here" >&2
        return 1
    fi
}

check_bundle
need_engine
ensure_image

# A private copy readable by the container user: the user's own file keeps its
# mode, and a name chosen here cannot break --mount's comma-separated syntax.
workdir=$(mktemp -d "${TMPDIR:-/tmp}/grade-in-docker.XXXXXX") || die "cannot create a temporary directory"
started=
cleanup() {
    # `timeout docker run` ends only the client, never the container: remove it.
    [ -n "$started" ] && docker rm -f "$NAME" >/dev/null 2>&1
    rm -rf "$workdir"
}
trap cleanup EXIT
trap 'cleanup; started=; die "interrupted; container $NAME removed"' INT TERM HUP
case $workdir in
    *,*|*\"*) die "the temporary directory $workdir contains a comma or quote, which --mount cannot take: set TMPDIR" ;;
esac
copy=$workdir/${dest##*/}
if ! err=$(copy_submission "$path" "$copy" 2>&1); then
    die "cannot copy $submission (it may have changed into a link or special file since it was checked): $(printf '%s' "$err" | head -n 1)"
fi
chmod 0644 "$copy" || die "cannot make the copy $copy readable"
if docker container inspect "$NAME" >/dev/null 2>&1; then
    die "a container named $NAME already exists: choose another GRADE_CONTAINER_NAME"
fi

started=1
t0=$SECONDS
# The docker client ignores SIGTERM while the container runs, hence KILL; that
# ends only the client, and cleanup then removes the container. With
# --sig-proxy=false a Ctrl-C ends the client too instead of being forwarded to
# the grader (PID 1 in the container ignores it).
# In the background so that `wait` returns at once on Ctrl-C or TERM and the
# trap can remove the container (bash delays traps until a foreground command ends).
timeout --foreground --signal=KILL "$TIMEOUT" docker run --name "$NAME" --sig-proxy=false "${RUN_FLAGS[@]}" \
    -e "SUBMISSION=$dest" \
    --mount "type=bind,src=$copy,dst=$dest,readonly" \
    "$IMAGE" "$@" &
wait $!
status=$?
if [ "$status" = 137 ] && [ $((SECONDS - t0)) -ge "$TIMEOUT" ]; then
    die "grading took longer than GRADE_TIMEOUT=$TIMEOUT s; container $NAME removed"
fi
case $status in
    0|1|2) exit "$status" ;;
    125) die "docker could not start the container (its message is above)" ;;
    126|127) die "the image's entry point could not run (exit $status): rebuild with $0 --build" ;;
    137) die "the grading container was killed (SIGKILL): out of memory at --memory 1g, or killed from outside" ;;
    *) die "the grading container ended with unexpected status $status" ;;
esac
