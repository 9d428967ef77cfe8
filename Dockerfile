# gpubench in a container: build with the CUDA toolkit, run on the CUDA base
# image (the worker links the CUDA runtime statically; the driver comes from
# the host through the NVIDIA container toolkit: docker run --gpus all).
#   docker build -t gpubench .
#   docker run --gpus all -p 127.0.0.1:8080:8080 -v gpubench:/var/lib/gpubench gpubench
#
# The base images and the runtime's package names are arguments, so the same
# steps build on a Debian base where NVIDIA's images cannot be pulled (no
# CUDA then: the worker reports no GPU and why).  scripts/container_check.sh
# builds it that way from a local debootstrap and starts the daemon in it.
ARG BUILD_IMAGE=nvidia/cuda:13.0.0-devel-ubuntu24.04
ARG RUN_IMAGE=nvidia/cuda:13.0.0-base-ubuntu24.04
FROM ${BUILD_IMAGE} AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config git python3 \
      libmicrohttpd-dev libcjson-dev libsqlite3-dev nettle-dev libcurl4-openssl-dev \
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
# Ubuntu 24.04's names; Debian 12's drop the t64.
ARG RUN_PACKAGES="libmicrohttpd12t64 libcjson1 libsqlite3-0 libcurl4t64 libnettle8t64"
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ${RUN_PACKAGES} libjs-chart.js curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --home-dir /var/lib/gpubench gpubench
COPY --from=build /opt/gpubench /opt/gpubench
# CUPTI (for the hardware counters) ships with the toolkit, not the driver:
# the worker loads the copy taken from the build stage.
ENV GPUBENCH_CUPTI_LIBRARY=/opt/gpubench/lib/libcupti.so
USER gpubench
WORKDIR /var/lib/gpubench
VOLUME /var/lib/gpubench
EXPOSE 8080
HEALTHCHECK CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
# Inside the container the port must be reachable from outside it, and the
# daemon refuses that without tokens: mount a token file, or publish the
# port on the host's loopback only (as above) and say so.
ENTRYPOINT ["/opt/gpubench/bin/gpubenchd", "--listen", "0.0.0.0:8080", "--db", "/var/lib/gpubench/gpubench.db"]
CMD ["--allow-unauthenticated"]
