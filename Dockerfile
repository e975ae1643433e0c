# The operator's image for a Docker engine. The build stage runs
# scripts/build-release, the very build CI runs and tests (scripts/test);
# the runtime is bookworm-slim with only the shared libraries the binary
# needs, as an unprivileged user. Without a Docker engine, scripts/build-image
# builds the image CI checks, from the same binary (docs/operating/install.md).
#   docker build -t gpu-placement-operator:0.2.0 \
#     --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u -d @"$(git log -1 --format=%ct)" +%Y-%m-%dT%H:%M:%SZ)" .
#
# Base images by the digest of their multi-architecture index, the newest
# found on 2026-11-25 with a code search of public repositories:
#   debian:bookworm-20261005 (Debian 12.15), sha256:2c037a04…, pinned by date
#     and digest in a public repository's install test and as
#     debian:bookworm@sha256:2c037a04… in another's Dockerfile;
#   debian:bookworm-20261005-slim, sha256:7c7b2c96…, recorded as that tag's
#     index digest in a public deployment note (pulled 2026-10-08) and pinned
#     as debian:bookworm-slim@sha256:7c7b2c96… in several Dockerfiles.
# scripts/check-dockerfile (run by the chart tests) checks both are pinned.
FROM debian:bookworm-20261005@sha256:2c037a04925515fdd6ea85ea14a682d0e79931f5e9f5d07b6dbfc6ba12f9e858 AS build
WORKDIR /src
COPY . .
RUN scripts/setup --packages-only && scripts/build-release build

FROM debian:bookworm-20261005-slim@sha256:7c7b2c966bc9ee8cedfeef67e0e279108992c77681fa595db4a9d65c06ccc587
RUN apt-get update \
 && apt-get install -y --no-install-recommends libssl3 libyaml-cpp0.7 libzstd1 libjemalloc2 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/bin/gpu-placement /usr/local/bin/gpu-placement
# The built-in catalog and rules, for reference and as a starting point
# for the chart's `catalog` and `rules` values.
COPY config/catalog.yaml config/rules.yaml /etc/gpu-placement/
COPY LICENSE /usr/share/doc/gpu-placement-operator/LICENSE
ARG VERSION=0.2.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="gpu-placement-operator" \
      org.opencontainers.image.description="Places AI/ML workloads on NVIDIA GPUs, AWS Trainium, Inferentia or CPU by patching their Deployments, StatefulSets and Jobs" \
      org.opencontainers.image.source="https://github.com/gpu-placement/gpu-placement-operator" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-20261005-slim" \
      org.opencontainers.image.base.digest="sha256:7c7b2c966bc9ee8cedfeef67e0e279108992c77681fa595db4a9d65c06ccc587"
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/gpu-placement"]
CMD ["run"]
