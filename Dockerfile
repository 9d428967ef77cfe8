# gpubench in a container: build with the CUDA toolkit, run on the CUDA base
# image (the worker links the CUDA runtime statically; the driver comes from
# the host through the NVIDIA container toolkit: docker run --gpus all).
#   docker build -t gpubench .
#   docker run --gpus all -p 127.0.0.1:8080:8080 -v gpubench:/var/lib/gpubench gpubench
#
# The base images are arguments, so the same steps build on a Debian base
# where NVIDIA's images cannot be pulled (no CUDA then: the worker reports no
# GPU and why).  scripts/container_check.sh builds it that way from a local
# debootstrap and starts the daemon in it, over HTTP and over TLS.
#
# The libraries' packages are not named here: both stages install what
# packaging/dependencies lists (one line per pkg_check_modules module of
# CMakeLists.txt), through scripts/packages.sh, which picks the runtime names
# of the base's distribution (Ubuntu 24.04's t64 or Debian 12's).
ARG BUILD_IMAGE=nvidia/cuda:13.0.0-devel-ubuntu24.04
ARG RUN_IMAGE=nvidia/cuda:13.0.0-base-ubuntu24.04
FROM ${BUILD_IMAGE} AS build
COPY packaging/dependencies scripts/packages.sh /tmp/gpubench-deps/
RUN packages=$(sh /tmp/gpubench-deps/packages.sh build) \
    && apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config git python3 ${packages} \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/opt/gpubench \
    && cmake --build build -j"$(nproc)" \
    && cmake --install build \
    && mkdir -p /opt/gpubench/lib \
    && if [ -d /usr/local/cuda ]; then \
         cp -L "$(find /usr/local/cuda/ -name 'libcupti.so.*' | sort | head -n1)" \
            /opt/gpubench/lib/libcupti.so; \
       fi

FROM ${RUN_IMAGE}
# The runtime libraries under this base's names (scripts/packages.sh run).
COPY packaging/dependencies scripts/packages.sh /tmp/gpubench-deps/
RUN packages=$(sh /tmp/gpubench-deps/packages.sh run) \
    && apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ${packages} libjs-chart.js curl \
    && rm -rf /var/lib/apt/lists/* /tmp/gpubench-deps \
    && useradd --system --create-home --home-dir /var/lib/gpubench gpubench
COPY --from=build /opt/gpubench /opt/gpubench
# CUPTI (for the hardware counters) ships with the toolkit, not the driver:
# the worker loads the copy taken from the build stage.
ENV GPUBENCH_CUPTI_LIBRARY=/opt/gpubench/lib/libcupti.so
USER gpubench
WORKDIR /var/lib/gpubench
VOLUME /var/lib/gpubench
EXPOSE 8080
# Over HTTPS when started with --web-config (a certificate for another name:
# -k; one that asks for client certificates fails it).
HEALTHCHECK CMD curl -fsS http://127.0.0.1:8080/healthz || curl -fsSk https://127.0.0.1:8080/healthz || exit 1
# Inside the container the port must be reachable from outside it, and the
# daemon refuses that without tokens: mount a token file, or publish the
# port on the host's loopback only (as above) and say so.
ENTRYPOINT ["/opt/gpubench/bin/gpubenchd", "--listen", "0.0.0.0:8080", "--db", "/var/lib/gpubench/gpubench.db"]
CMD ["--allow-unauthenticated"]
