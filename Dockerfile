# Grading image for one problem bundle: the repository's own (the default), or
# another one under the repository (`--build-arg BUNDLE=track/NAME`;
# scripts/grade-in-docker.sh passes $GRADER_BUNDLE). The image carries that
# bundle and the grader. How to run it, and why each `docker run` flag is there:
# docs/docker.md. Short version:
#
#   docker run --rm --network none --read-only --tmpfs /tmp:rw,noexec,nosuid,size=64m \
#     --memory 1g --memory-swap 1g --pids-limit 128 --cap-drop ALL \
#     --security-opt no-new-privileges \
#     --mount type=bind,src="$PWD/solution.py",dst=/submission/solution.py,readonly IMAGE [--tests sample]
#
# prints the verdict JSON; exit status 0 AC, 1 another verdict, 2 cannot judge.
#
# Users build FROM the official Python image. CI reaches no registry, so it passes
# a base it made itself with debootstrap (scripts/docker-ci.sh). Any Debian-like
# base with python3 >= 3.11 and its venv module works. No `# syntax=` line and
# no BuildKit-only instruction: the classic builder must be able to build this.
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}

ARG GRADER_UID=10001
# The bundle's folder, relative to the build context (the repository root): its
# problem.yaml, problem.py, calibration.yaml, reference/ and testcases/ go into the image.
ARG BUNDLE=.

# A venv, so pip never touches the base's own Python (Debian marks it externally
# managed) and the same lines work on python:3.x-slim and on plain Debian.
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SUBMISSION=/submission/solution.py

# Dependencies first: this layer stays cached while the grader changes.
# Wheels only (slim bases have no compiler); pip itself is removed afterwards
# because nothing at run time installs anything.
COPY requirements.txt /opt/bundle/requirements.txt
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/python -m pip install --only-binary :all: -r /opt/bundle/requirements.txt \
 && /opt/venv/bin/python -m pip uninstall -y -q pip setuptools \
 && /opt/venv/bin/python -c "import numpy, yaml; print('numpy', numpy.__version__, 'PyYAML', yaml.__version__)"

# The grading user owns nothing: every bundle file is root's, read-only, and
# readable only through the group `grader` (so not by a uid the grader drops a
# worker to, when it runs as root with CAP_SETUID; see docs/docker.md).
RUN groupadd --system --gid ${GRADER_UID} grader \
 && useradd --system --uid ${GRADER_UID} --gid grader --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin grader

# Only what grading needs: the grader, and the bundle's parts. reference/ serves
# --secret-seed; problem.py and calibration.yaml are optional (the bracket globs let
# COPY succeed when they do not exist).
COPY ${BUNDLE}/problem.yaml ${BUNDLE}/problem.p[y] ${BUNDLE}/calibration.yam[l] /opt/bundle/
COPY grader /opt/bundle/grader
COPY ${BUNDLE}/reference /opt/bundle/reference
COPY ${BUNDLE}/testcases /opt/bundle/testcases

# Entry point: check the mount (the classic mistakes give a directory or an
# unreadable file; a folder mounted at /submission can hold a symlink, to the
# file or to a folder on the way, into the bundle, which the group grader may
# read), then grade. These checks choose the message (exit 2); the grader itself
# opens $SUBMISSION with O_NOFOLLOW, and with --within /submission follows no
# link below it (grader/judging/paths.py). The verdict JSON goes to stdout; when a
# directory is mounted at /output it is also written to /output/verdict.json.
RUN printf '%s\n' \
      '#!/bin/sh' \
      '# Grade $SUBMISSION; extra arguments go to `python -m grader grade`.' \
      'set -u' \
      'sub="${SUBMISSION:-/submission/solution.py}"' \
      'mount_hint="mount it with --mount type=bind,src=/ABSOLUTE/PATH/solution.py,dst=$sub,readonly"' \
      'case "$sub" in /submission/*) p=$(dirname "$sub") ;; *) p=/submission ;; esac' \
      'while [ "$p" != /submission ] && [ "$p" != / ] && [ "$p" != . ]; do' \
      '  if [ -L "$p" ]; then' \
      '    echo "grade: $p is a symbolic link on the way to $sub: the grader never follows links; mount the files themselves" >&2; exit 2' \
      '  fi' \
      '  p=$(dirname "$p")' \
      'done' \
      'if [ -L "$sub" ]; then' \
      '  echo "grade: $sub is a symbolic link: the grader never follows links (one could point at the reference in the image); mount the file itself: $mount_hint" >&2; exit 2' \
      'elif [ -d "$sub" ]; then' \
      '  echo "grade: $sub is a directory, not your file: docker -v with a relative path (no ./) creates a volume, and with a missing path creates a directory; $mount_hint" >&2; exit 2' \
      'elif [ ! -e "$sub" ]; then' \
      '  echo "grade: no submission at $sub: $mount_hint" >&2; exit 2' \
      'elif [ ! -f "$sub" ]; then' \
      '  echo "grade: $sub is not a regular file (a FIFO, socket or device): $mount_hint" >&2; exit 2' \
      'elif [ ! -r "$sub" ]; then' \
      '  echo "grade: $sub is not readable by the container user (uid $(id -u)): run chmod a+r on it, or use scripts/grade-in-docker.sh, which copies it readable" >&2; exit 2' \
      'fi' \
      'if [ "$(id -u)" = 0 ]; then' \
      '  cap=$(sed -n "s/^CapEff:[[:space:]]*//p" /proc/self/status)' \
      '  if [ $(( 0x$cap & 0xc0 )) -ne $(( 0xc0 )) ]; then' \
      '    echo "grade: running as root without CAP_SETUID and CAP_SETGID: the grader refuses to run submissions as root. Drop --user 0 (the image runs as uid 10001), or add --cap-add SETUID --cap-add SETGID" >&2; exit 2' \
      '  fi' \
      'fi' \
      'if ! [ -w /tmp ]; then' \
      '  echo "grade: /tmp is not writable: add --tmpfs /tmp (needed with --read-only)" >&2; exit 2' \
      'fi' \
      'case "$sub" in /submission/*) set -- --within /submission "$@" ;; esac' \
      'cd /opt/bundle || exit 2' \
      'if ! [ -d /output ]; then' \
      '  exec python -m grader grade "$sub" --json - "$@"' \
      'fi' \
      'python -m grader grade "$sub" --json - "$@" > /tmp/verdict.json' \
      'rc=$?' \
      'cat /tmp/verdict.json' \
      'cp /tmp/verdict.json /output/verdict.json 2>/dev/null \' \
      '  || echo "grade: cannot write /output/verdict.json: make the mounted directory writable by uid $(id -u)" >&2' \
      'exit $rc' \
      > /usr/local/bin/grade \
 && printf '%s\n' \
      '#!/bin/sh' \
      '# PrairieLearn external-grading entry point: /grade/student -> /grade/results/results.json' \
      '# (grader/platforms/programs/prairielearn_entry.py; docs/platforms.md, PrairieLearn section).' \
      'cd /opt/bundle || exit 2' \
      '# As a module from /opt/bundle: its `# INCLUDE` import (grader/platforms/grade_call.py) is found there.' \
      'exec python -m grader.platforms.programs.prairielearn_entry "$@"' \
      > /usr/local/bin/grade-prairielearn \
 && python3 -m compileall -q /opt/bundle/grader /opt/bundle/reference \
 && chown -R root:grader /opt/bundle \
 && chmod -R u=rX,g=rX,o= /opt/bundle \
 && chown root:root /usr/local/bin/grade /usr/local/bin/grade-prairielearn \
 && chmod 0555 /usr/local/bin/grade /usr/local/bin/grade-prairielearn

LABEL org.opencontainers.image.title="NumPy exercise grader" \
      org.opencontainers.image.description="Sandboxed grader for the bundle ${BUNDLE} of its repository; see docs/docker.md"

USER ${GRADER_UID}:${GRADER_UID}
WORKDIR /opt/bundle
ENTRYPOINT ["/usr/local/bin/grade"]
CMD []
